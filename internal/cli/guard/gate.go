package guard

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

// GateOptions are what a session's gate asks through and watches, given
// by the front end.
type GateOptions struct {
	// SessionPath is the session file: the gate's "always" rules are
	// kept beside it (approval.RulesFile), so a resume keeps them and a
	// fork starts without any.
	SessionPath string
	// Ask answers the questions: an embedder's (Embedded set) or the
	// terminal's (TerminalAsk), as the hooks' notifications wrap it.
	Ask      approval.AskFunc
	Embedded bool
	// Mode is the approval mode now (Shift+Tab, an editor's
	// session/set_mode); TxUsable reports whether commands run as
	// transactions, whose changes review shows.
	Mode     func() approval.Mode
	TxUsable func() bool
	// Report shows one line to the user.
	Report func(string)
}

// NewGate is the approval gate for the mode in effect and the session:
// nil in auto mode; its Approve method is the agent's hook.
func (g *Guard) NewGate(o GateOptions) (*approval.Gate, error) {
	// Interactive mode may switch to ask at any time (Shift+Tab).
	if g.approval != approval.Ask && g.approval != approval.Edits && g.approval != approval.Review && !g.o.UI {
		return nil, nil
	}
	edits := func() bool { return o.Mode() == approval.Edits }
	gate, err := g.sessionGate(o.SessionPath, o.Ask)
	if o.Embedded {
		if gate != nil {
			// The editor switches modes at any time (session/set_mode).
			gate.ReviewAfter(func() bool { return o.Mode() == approval.Review && o.TxUsable() })
			gate.AcceptEditsWhile(edits)
		}
		g.keepInSettings(gate, o.Report)
		return gate, err
	}
	if err != nil {
		return nil, err
	}
	if g.approval == approval.Review {
		gate.ReviewAfter(o.TxUsable)
	}
	gate.AcceptEditsWhile(edits)
	g.keepInSettings(gate, o.Report)
	return gate, nil
}

// sessionGate is the gate with the session's kept rules; the lines of
// them tiny-go did not seal are refused, in one line.
func (g *Guard) sessionGate(sessionPath string, ask approval.AskFunc) (*approval.Gate, error) {
	gate, err := approval.NewSessionGate(g.o.Cwd, sessionPath, ask)
	if err == nil && gate.Refused() != "" {
		fmt.Fprintf(g.o.Stderr, "%s: warning: %s\n", cmdutil.ProgramName, gate.Refused())
	}
	return gate, err
}

// Terminal is how the terminal answers a question: the UI while it runs,
// else a line on stderr answered on stdin.
type Terminal struct {
	// UI asks in the terminal UI; ui.ErrNotAttached when it is not
	// running.
	UI func(context.Context, approval.Prompt) (approval.Answer, error)
	// Hold keeps a spinner sharing stderr from erasing the question
	// until release is called.
	Hold      func() (release func())
	Stdin     io.Reader
	Stderr    io.Writer
	SessionID func() string
	// Abort aborts the operation, as Esc does.
	Abort func(context.Context) error
}

// TerminalAsk is the gate's ask in the terminal; under defaultMode
// dontAsk it refuses without asking.
func (g *Guard) TerminalAsk(t Terminal) approval.AskFunc {
	return func(ctx context.Context, p approval.Prompt) (approval.Answer, error) {
		if g.perms != nil && g.perms.dontAsk {
			return dontAskAnswer(), nil
		}
		ans, err := t.UI(ctx, p)
		if !errors.Is(err, ui.ErrNotAttached) {
			return ans, err
		}
		// Before the UI (a resume) or in one-shot mode a spinner may share
		// stderr: hold it, so no frame erases the question.
		defer t.Hold()()
		ans, err = ui.AskLine(ctx, t.Stdin, t.Stderr, p)
		if errors.Is(err, io.EOF) {
			return ans, noAnswerError(err, t.SessionID())
		}
		if errors.Is(err, ui.ErrAborted) {
			// Esc: abort the operation the usual way; that ends ctx,
			// which is the wait's phase.
			if aerr := t.Abort(context.WithoutCancel(ctx)); aerr != nil {
				return approval.Answer{}, aerr
			}
			return approval.Answer{}, context.Cause(ctx)
		}
		return ans, err
	}
}

// noAnswerError is the failure of an approval question that stdin ended
// before answering (no terminal): the call stays unrun and unrecorded, and
// the line says how to go on.
func noAnswerError(err error, id string) error {
	return fmt.Errorf("%w: a call is waiting for approval and there is no terminal to answer it; "+
		"run tiny-go --session %s in a terminal to answer, or tiny-go --session %s --approval auto to allow every call", err, id, id)
}

// ApproveHook is gate's Approve method, or nil without a gate.
func ApproveHook(gate *approval.Gate) agent.ApproveFunc {
	if gate == nil {
		return nil
	}
	return gate.Approve
}
