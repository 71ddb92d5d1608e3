package assemble

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/ui"
)

// configureApproval resolves --approval: ask by default in interactive
// mode (no prompt), auto in one-shot and --json mode.
func (a *Runner) configureApproval() error {
	a.approval = approval.Auto
	if a.UIObserver != nil && !a.Flags.JSON {
		a.approval = approval.Ask
	}
	defer func() { a.Mode = approval.NewSwitch(a.approval) }()
	if a.Flags.Approval == "" {
		return nil
	}
	m, err := approval.ParseMode(a.Flags.Approval)
	if err != nil {
		return cmdutil.UsageError{Err: err}
	}
	a.approval = m
	return nil
}

// newGate is the approval gate for the mode in effect and the current
// session: nil in auto mode; its Approve method is the agent's hook. Its "always" rules are the session's,
// kept beside it (approval.RulesFile), so a resume keeps them; a fork
// starts without any. Questions go to the interactive UI while it runs,
// and otherwise (recovery before the UI starts, one-shot mode) to stderr,
// answered on stdin.
func (a *Runner) NewGate() (*approval.Gate, error) {
	// Interactive mode may switch to ask at any time (Shift+Tab).
	if a.approval != approval.Ask && a.approval != approval.Edits && a.approval != approval.Review && a.UIObserver == nil {
		return nil, nil
	}
	if a.Embed != nil {
		ask := a.Embed.ask
		if a.Embed.PermissionMode == nil {
			ask = a.UserHooks.NotifyingAsk(ask)
		}
		g, err := a.sessionGate(ask)
		if g != nil {
			// The editor switches modes at any time (session/set_mode).
			g.ReviewAfter(func() bool { return a.Mode.Mode() == approval.Review && a.undo().TxUsable() })
			g.AcceptEditsWhile(func() bool { return a.Mode.Mode() == approval.Edits })
		}
		a.keepInSettings(g)
		return g, err
	}
	g, err := a.newAskingGate()
	if err != nil {
		return nil, err
	}
	if a.approval == approval.Review {
		g.ReviewAfter(a.undo().TxUsable)
	}
	g.AcceptEditsWhile(func() bool { return a.Mode.Mode() == approval.Edits })
	a.keepInSettings(g)
	return g, nil
}

// newAskingGate is the gate that asks on the terminal.
func (a *Runner) newAskingGate() (*approval.Gate, error) {
	ask := func(ctx context.Context, p approval.Prompt) (approval.Answer, error) {
		if a.Perms != nil && a.Perms.dontAsk {
			return dontAskAnswer(), nil
		}
		ans, err := a.UIObserver.Ask(ctx, p)
		if !errors.Is(err, ui.ErrNotAttached) {
			return ans, err
		}
		// Before the UI (a resume) or in one-shot mode a spinner may share
		// stderr: hold it, so no frame erases the question.
		if s := a.progress(); s != nil {
			s.Asking(true)
			defer s.Asking(false)
		}
		ans, err = ui.AskLine(ctx, a.IO.Stdin, a.IO.Stderr, p)
		if errors.Is(err, io.EOF) {
			return ans, a.noAnswerError(err)
		}
		if errors.Is(err, ui.ErrAborted) {
			// Esc: abort the operation the usual way; that ends ctx,
			// which is the wait's phase.
			if _, aerr := a.Agent.Abort(context.WithoutCancel(ctx)); aerr != nil {
				return approval.Answer{}, aerr
			}
			return approval.Answer{}, context.Cause(ctx)
		}
		return ans, err
	}
	return a.sessionGate(a.UserHooks.NotifyingAsk(ask))
}

// sessionGate is the gate with the session's kept rules; the lines of
// them tiny-go did not seal are refused, in one line.
func (a *Runner) sessionGate(ask approval.AskFunc) (*approval.Gate, error) {
	g, err := approval.NewSessionGate(a.Cwd, a.Store.Path(), ask)
	if err == nil && g.Refused() != "" {
		fmt.Fprintf(a.IO.Stderr, "%s: warning: %s\n", cmdutil.ProgramName, g.Refused())
	}
	return g, err
}

// progress is the one-shot display that shows progress on stderr now, or
// nil.
func (a *Runner) progress() *ui.OneShot {
	switch {
	case a.PreUI != nil && a.PreUI.On.Load():
		return a.PreUI.Inner
	case a.oneShot != nil:
		return a.oneShot
	}
	return nil
}

// noAnswerError is the failure of an approval question that stdin ended
// before answering (no terminal): the call stays unrun and unrecorded, and
// the line says how to go on.
func (a *Runner) noAnswerError(err error) error {
	id := a.Store.ID()
	return fmt.Errorf("%w: a call is waiting for approval and there is no terminal to answer it; "+
		"run tiny-go --session %s in a terminal to answer, or tiny-go --session %s --approval auto to allow every call", err, id, id)
}

// approveHook is g's Approve method, or nil without a gate.
func ApproveHook(g *approval.Gate) agent.ApproveFunc {
	if g == nil {
		return nil
	}
	return g.Approve
}
