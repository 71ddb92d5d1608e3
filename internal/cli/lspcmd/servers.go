package lspcmd

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/config"
	"github.com/tiny-agent/tiny-go/internal/lsp"
	"github.com/tiny-agent/tiny-go/internal/procs"
	"github.com/tiny-agent/tiny-go/internal/sandbox"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// Servers are the language servers of a run (docs/lsp.md): nil when
// TINY_LSP=off or when neither write nor edit is offered. Nothing starts
// before a file needs its server.
type Servers struct {
	Manager *lsp.Manager
	effects *lsp.Effects
}

// RunOptions are what a run's language servers are made from.
type RunOptions struct {
	Getenv   func(string) string
	Settings *config.Settings
	Cwd      string
	// Plugins are the built-in tools offered (servers follow write and
	// edit).
	Plugins []string
	// Env is the commands' environment (without tiny-go's keys).
	Env     []string
	Sandbox *sandbox.Sandbox
	Procs   *procs.Tracker
	// Changed lists the files the effect of a tool call changed (its
	// checkpoints): what a command rewrote is checked too.
	Changed func(ctx context.Context, id string) ([]string, error)
}

// on tells whether a run with these plugins has language servers.
func on(getenv func(string) string, plugins []string) bool {
	return !strings.EqualFold(strings.TrimSpace(getenv("TINY_LSP")), "off") &&
		(slices.Contains(plugins, tools.PluginWrite) || slices.Contains(plugins, tools.PluginEdit))
}

// DefaultTools are the tools language servers add to a run with every
// built-in (the configuration a resume is checked against).
func DefaultTools(getenv func(string) string) []tools.Tool {
	if !on(getenv, tools.PluginNames()) {
		return nil
	}
	return []tools.Tool{lsp.NewManager(lsp.Options{}).Tool()}
}

// NewServers prepares the language servers of a run (nil when off).
func NewServers(o RunOptions) (*Servers, error) {
	if !on(o.Getenv, o.Plugins) {
		return nil, nil
	}
	settings, err := Settings(o.Settings, o.Cwd)
	if err != nil {
		return nil, err
	}
	m := lsp.NewManager(lsp.Options{WorkDir: o.Cwd, Env: o.Env, Sandbox: o.Sandbox, Procs: o.Procs, Settings: settings})
	return &Servers{Manager: m, effects: lsp.NewEffects(m, o.Changed)}, nil
}

// Tools is the diagnostics tool, if the servers are on.
func (s *Servers) Tools() []tools.Tool {
	if s == nil {
		return nil
	}
	return []tools.Tool{s.Manager.Tool()}
}

// Before adds the language servers' part to a BeforeEffect: the text a
// write or edit is about to replace goes to its server meanwhile.
func (s *Servers) Before(hook agent.BeforeEffect) agent.BeforeEffect {
	if s == nil {
		return hook
	}
	return func(ctx context.Context, id, tool string, args jsontext.Value) func() {
		var after func()
		if hook != nil {
			after = hook(ctx, id, tool, args)
		}
		s.effects.Before(ctx, id, tool, json.RawMessage(args))
		return after
	}
}

// Note is the agent's ResultNote: the diagnostics a change introduced.
func (s *Servers) Note() agent.ResultNote {
	if s == nil {
		return nil
	}
	return func(ctx context.Context, id, tool string, _ jsontext.Value, failed bool) string {
		return s.effects.Note(ctx, id, tool, failed)
	}
}

// Close stops the servers that started.
func (s *Servers) Close() {
	if s != nil {
		s.Manager.Close()
	}
}
