package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/ui"
)

// configureApproval resolves --approval: ask by default in interactive
// mode (no prompt), auto in one-shot and --json mode.
func (a *runner) configureApproval() error {
	a.approval = approval.Auto
	if a.uiObserver != nil && !a.flags.json {
		a.approval = approval.Ask
	}
	defer func() { a.mode = approval.NewSwitch(a.approval) }()
	if a.flags.approval == "" {
		return nil
	}
	m, err := approval.ParseMode(a.flags.approval)
	if err != nil {
		return usageError{Err: err}
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
func (a *runner) newGate() (*approval.Gate, error) {
	// Interactive mode may switch to ask at any time (Shift+Tab).
	if a.approval != approval.Ask && a.approval != approval.Edits && a.approval != approval.Review && a.uiObserver == nil {
		return nil, nil
	}
	if a.embed != nil {
		ask := a.embed.ask
		if a.embed.permissionMode == nil {
			ask = a.userHooks.NotifyingAsk(ask)
		}
		g, err := a.sessionGate(ask)
		if g != nil {
			// The editor switches modes at any time (session/set_mode).
			g.ReviewAfter(func() bool { return a.mode.Mode() == approval.Review && a.transactions().usable() })
			g.AcceptEditsWhile(func() bool { return a.mode.Mode() == approval.Edits })
		}
		a.keepInSettings(g)
		return g, err
	}
	g, err := a.newAskingGate()
	if err != nil {
		return nil, err
	}
	if a.approval == approval.Review {
		g.ReviewAfter(a.transactions().usable)
	}
	g.AcceptEditsWhile(func() bool { return a.mode.Mode() == approval.Edits })
	a.keepInSettings(g)
	return g, nil
}

// newAskingGate is the gate that asks on the terminal.
func (a *runner) newAskingGate() (*approval.Gate, error) {
	ask := func(ctx context.Context, p approval.Prompt) (approval.Answer, error) {
		if a.perms != nil && a.perms.dontAsk {
			return dontAskAnswer(), nil
		}
		ans, err := a.uiObserver.Ask(ctx, p)
		if !errors.Is(err, ui.ErrNotAttached) {
			return ans, err
		}
		// Before the UI (a resume) or in one-shot mode a spinner may share
		// stderr: hold it, so no frame erases the question.
		if s := a.progress(); s != nil {
			s.Asking(true)
			defer s.Asking(false)
		}
		ans, err = ui.AskLine(ctx, a.io.stdin, a.io.stderr, p)
		if errors.Is(err, io.EOF) {
			return ans, a.noAnswerError(err)
		}
		if errors.Is(err, ui.ErrAborted) {
			// Esc: abort the operation the usual way; that ends ctx,
			// which is the wait's phase.
			if _, aerr := a.agent.Abort(context.WithoutCancel(ctx)); aerr != nil {
				return approval.Answer{}, aerr
			}
			return approval.Answer{}, context.Cause(ctx)
		}
		return ans, err
	}
	return a.sessionGate(a.userHooks.NotifyingAsk(ask))
}

// sessionGate is the gate with the session's kept rules; the lines of
// them tiny-go did not seal are refused, in one line.
func (a *runner) sessionGate(ask approval.AskFunc) (*approval.Gate, error) {
	g, err := approval.NewSessionGate(a.cwd, a.store.Path(), ask)
	if err == nil && g.Refused() != "" {
		fmt.Fprintf(a.io.stderr, "%s: warning: %s\n", programName, g.Refused())
	}
	return g, err
}

// progress is the one-shot display that shows progress on stderr now, or
// nil.
func (a *runner) progress() *ui.OneShot {
	switch {
	case a.preUI != nil && a.preUI.on.Load():
		return a.preUI.inner
	case a.oneShot != nil:
		return a.oneShot
	}
	return nil
}

// noAnswerError is the failure of an approval question that stdin ended
// before answering (no terminal): the call stays unrun and unrecorded, and
// the line says how to go on.
func (a *runner) noAnswerError(err error) error {
	id := a.store.ID()
	return fmt.Errorf("%w: a call is waiting for approval and there is no terminal to answer it; "+
		"run tiny-go --session %s in a terminal to answer, or tiny-go --session %s --approval auto to allow every call", err, id, id)
}

// approveHook is g's Approve method, or nil without a gate.
func approveHook(g *approval.Gate) agent.ApproveFunc {
	if g == nil {
		return nil
	}
	return g.Approve
}
