package assemble

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/cli/lspcmd"
	"github.com/tiny-agent/tiny-go/internal/lsp"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// lspState is the language servers of a run (docs/lsp.md): nil when
// TINY_LSP=off or when neither write nor edit is offered. Nothing starts
// before a file needs its server.
type lspState struct {
	Manager *lsp.Manager
	effects *lsp.Effects
}

// lspOn tells whether a run with these plugins has language servers.
func lspOn(getenv func(string) string, plugins []string) bool {
	return !strings.EqualFold(strings.TrimSpace(getenv("TINY_LSP")), "off") &&
		(slices.Contains(plugins, tools.PluginWrite) || slices.Contains(plugins, tools.PluginEdit))
}

// defaultLSPTools are the tools language servers add to a run with every
// built-in (the configuration a resume is checked against).
func DefaultLSPTools(getenv func(string) string) []tools.Tool {
	if !lspOn(getenv, tools.PluginNames()) {
		return nil
	}
	return []tools.Tool{lsp.NewManager(lsp.Options{}).Tool()}
}

// newLSP prepares the language servers of a run; env is the commands'
// environment (without tiny-go's keys).
func (a *Runner) newLSP(env []string) (*lspState, error) {
	if !lspOn(a.IO.Getenv, a.tools) {
		return nil, nil
	}
	settings, err := lspcmd.Settings(a.IO.Settings, a.Cwd)
	if err != nil {
		return nil, err
	}
	m := lsp.NewManager(lsp.Options{WorkDir: a.Cwd, Env: env, Sandbox: a.Guard.Sandbox(), Procs: a.Guard.Procs(), Settings: settings})
	st := &lspState{Manager: m}
	st.effects = lsp.NewEffects(m, func(ctx context.Context, id string) ([]string, error) {
		if a.recorder == nil {
			return nil, errors.New("checkpoints are off")
		}
		return a.recorder.Changed(ctx, id)
	})
	return st, nil
}

// tools is the diagnostics tool, if the servers are on.
func (l *lspState) tools() []tools.Tool {
	if l == nil {
		return nil
	}
	return []tools.Tool{l.Manager.Tool()}
}

// before adds the language servers' part to a BeforeEffect: the text a
// write or edit is about to replace goes to its server meanwhile.
func (l *lspState) before(hook agent.BeforeEffect) agent.BeforeEffect {
	if l == nil {
		return hook
	}
	return func(ctx context.Context, id, tool string, args jsontext.Value) func() {
		var after func()
		if hook != nil {
			after = hook(ctx, id, tool, args)
		}
		l.effects.Before(ctx, id, tool, json.RawMessage(args))
		return after
	}
}

// note is the agent's ResultNote: the diagnostics a change introduced.
func (l *lspState) note() agent.ResultNote {
	if l == nil {
		return nil
	}
	return func(ctx context.Context, id, tool string, _ jsontext.Value, failed bool) string {
		return l.effects.Note(ctx, id, tool, failed)
	}
}

func (l *lspState) close() {
	if l != nil {
		l.Manager.Close()
	}
}
