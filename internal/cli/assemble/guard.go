package assemble

import (
	"context"
	"slices"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/cli/guard"
	"github.com/tiny-agent/tiny-go/internal/planmode"
	"github.com/tiny-agent/tiny-go/internal/secrets"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/ui"
)

// configureGuard reads the permission rules and resolves the approval
// mode (internal/cli/guard); the sandbox is opened last in configure.
func (a *Runner) configureGuard() error {
	g, err := guard.New(guard.Options{Cwd: a.Cwd, Getenv: a.IO.Getenv, Stderr: a.IO.Stderr, Approval: a.Flags.Approval,
		UI: a.UIObserver != nil, JSON: a.Flags.JSON, Sandbox: a.Flags.Sandbox})
	if err != nil {
		return err
	}
	a.Guard = g
	a.Mode = approval.NewSwitch(g.Approval())
	return nil
}

// NewGate is the approval gate of the current session (guard.NewGate):
// questions go to the embedder, else to the interactive UI while it runs
// and otherwise (recovery before the UI starts, one-shot mode) to stderr,
// answered on stdin.
func (a *Runner) NewGate() (*approval.Gate, error) {
	o := guard.GateOptions{SessionPath: a.Store.Path(), Mode: func() approval.Mode { return a.Mode.Mode() },
		TxUsable: a.undo().TxUsable, Report: a.hookLine}
	if a.Embed != nil {
		o.Ask, o.Embedded = a.Embed.ask, true
		if a.Embed.PermissionMode == nil {
			o.Ask = a.UserHooks.NotifyingAsk(o.Ask)
		}
		return a.Guard.NewGate(o)
	}
	o.Ask = a.UserHooks.NotifyingAsk(a.Guard.TerminalAsk(guard.Terminal{
		UI: a.UIObserver.Ask, Hold: a.holdProgress, Stdin: a.IO.Stdin, Stderr: a.IO.Stderr,
		SessionID: func() string { return a.Store.ID() },
		Abort:     func(ctx context.Context) error { _, err := a.Agent.Abort(ctx); return err },
	}))
	return a.Guard.NewGate(o)
}

// holdProgress holds the one-shot display while a question is on stderr.
func (a *Runner) holdProgress() func() {
	s := a.progress()
	if s == nil {
		return func() {}
	}
	s.Asking(true)
	return func() { s.Asking(false) }
}

// progress is the one-shot display that shows progress on stderr now, or
// nil.
func (a *Runner) progress() *ui.OneShot {
	switch {
	case a.PreUI != nil && a.PreUI.On.Load():
		return a.PreUI.Inner
	case a.OneShot != nil:
		return a.OneShot
	}
	return nil
}

// permissionHooks puts the rules in front of the hooks (inner, maybe nil)
// of an agent; someone can answer where there is a gate (interactive
// mode, in every approval mode) or an embedder.
func (a *Runner) permissionHooks(inner agent.HookRunner) agent.HookRunner {
	return a.Guard.PermissionHooks(inner, a.Skills, func() bool { return a.Gate != nil || a.Embed != nil })
}

// scrubber masks the values of the secret variables in tool results.
func (a *Runner) scrubber(vars []string) *secrets.Scrubber {
	return guard.Scrubber(a.IO.Getenv, vars, a.IO.Settings.TokenEnvNames())
}

// WithoutReminders is msgs with the plan-mode reminder taken out of the
// user's prompts, for a recap (a copy: the state is not changed).
func WithoutReminders(msgs []session.Message) []session.Message {
	var out []session.Message
	for i, m := range msgs {
		if m.Role != session.RoleUser || m.Content == nil || planmode.Strip(*m.Content) == *m.Content {
			continue
		}
		if out == nil {
			out = slices.Clone(msgs)
		}
		text := planmode.Strip(*m.Content)
		out[i].Content = &text
	}
	if out == nil {
		return msgs
	}
	return out
}
