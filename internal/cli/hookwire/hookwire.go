// Package hookwire wires the user's hooks (internal/hooks) into one
// tiny-go process: the hooks in effect for the working directory, the
// terminal notifier, and the session events a front end reports to them
// (start, end, switch, compaction, approval prompts, subagents).
package hookwire

import (
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/config"
	"github.com/tiny-agent/tiny-go/internal/hooks"
)

// Options is what the hooks of one process are built from.
type Options struct {
	// Getenv is the environment with the settings files' values;
	// Settings the loaded settings (nil: none).
	Getenv   func(string) string
	Settings *config.Settings
	Cwd      string
	// Stderr receives the configuration's problems.
	Stderr io.Writer
	// Terminal receives the notifier's bell or OSC sequences (nil: none).
	Terminal io.Writer
	// Callbacks makes a runner even without configured hooks: the Agent
	// SDK adds its hook callbacks later. SDK says the process is driven
	// by an SDK or print mode (Claude Code's "sdk-cli" entrypoint).
	Callbacks, SDK bool
	// Mode is Claude Code's name of the permission mode in effect.
	Mode func() string
	// Env is the hooks' environment; Scrub masks secrets in their output.
	Env   []string
	Scrub func(string) string
	// Report shows one line about a hook to the user.
	Report func(string)
	// Start starts a hook's process contained (sandbox.Start).
	Start func(*exec.Cmd) error
}

// Hooks is the hooks of one process. A nil *Hooks has no hooks.
type Hooks struct {
	run      *hooks.Runner // nil when no hook is configured
	notifier *hooks.Notifier
	after    time.Duration
	// manual is set while /compact runs, for PreCompact's trigger;
	// instructions are what followed /compact (custom_instructions).
	manual       atomic.Bool
	instructions atomic.Pointer[string]
}

// New reads the hooks and the notification settings in effect. Problems
// of the hooks' configuration are named on Stderr, not fatal; a bad
// setting is a usage error.
func New(o Options) (*Hooks, error) {
	cfg, project := Load(o.Getenv, o.Settings, o.Cwd)
	for _, p := range cfg.Problems {
		fmt.Fprintf(o.Stderr, "%s: %s\n", cmdutil.ProgramName, p)
	}
	h := &Hooks{after: hooks.DefaultNotifyAfter}
	if err := h.configureNotify(o); err != nil {
		return nil, err
	}
	if len(cfg.Hooks) == 0 && !o.Callbacks {
		return h, nil
	}
	failClosed := false
	if v := o.Getenv(config.EnvVar(config.HookFailClosed)); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, cmdutil.UsageErrorf("%s must be true or false", config.EnvVar(config.HookFailClosed))
		}
		failClosed = b
	}
	entry := "cli"
	if o.SDK {
		entry = "sdk-cli" // print mode and the Agent SDKs, as Claude Code says
	}
	h.run = hooks.New(hooks.Options{
		Entrypoint: entry,
		Config:     cfg, Cwd: o.Cwd, ProjectDir: project,
		Env: o.Env, Scrub: o.Scrub,
		Mode: o.Mode, FailClosed: failClosed, Report: o.Report,
		// Contained as commands are, without their overlay: a hook's
		// writes are not part of any command's transaction.
		Start: o.Start,
	})
	return h, nil
}

// Load reads the hooks in effect for cwd: Claude Code's settings files,
// then the [hooks] tables of config.toml. It returns the project
// directory the hooks see too.
func Load(getenv func(string) string, settings *config.Settings, cwd string) (*hooks.Config, string) {
	home := getenv("HOME")
	project := hooks.ProjectDir(cwd, home)
	var tables []hooks.Table
	if settings != nil {
		for _, t := range settings.HookTables() {
			tables = append(tables, hooks.Table{Source: t.Source.String(), JSON: t.JSON})
		}
	}
	return hooks.Load(hooks.SettingsFiles(home, project), tables), project
}

// configureNotify reads notify and notify_after.
func (h *Hooks) configureNotify(o Options) error {
	style := o.Getenv(config.EnvVar(config.Notify))
	switch style {
	case "":
		style = hooks.NotifyBell
	case hooks.NotifyOff, hooks.NotifyBell, hooks.NotifyOSC9, hooks.NotifyOSC777:
	default:
		return cmdutil.UsageErrorf("%s must be off, bell, osc9 or osc777", config.EnvVar(config.Notify))
	}
	if v := o.Getenv(config.EnvVar(config.NotifyAfter)); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return cmdutil.UsageErrorf("%s must be a positive duration such as 30s", config.EnvVar(config.NotifyAfter))
		}
		h.after = d
	}
	h.notifier = &hooks.Notifier{Style: style, W: o.Terminal}
	return nil
}

// Runner is the hooks runner, or nil when no hook is configured.
func (h *Hooks) Runner() *hooks.Runner {
	if h == nil {
		return nil
	}
	return h.run
}

// Agent is the agent's HookRunner: nil (not a nil pointer) without
// hooks, so the agent skips them entirely.
func (h *Hooks) Agent() agent.HookRunner {
	if r := h.Runner(); r != nil {
		return r
	}
	return nil
}

// Attach gives the hooks the session they report on.
func (h *Hooks) Attach(id, path string) error {
	if r := h.Runner(); r != nil {
		return r.Attach(id, path)
	}
	return nil
}

// Child is a hooks runner for a subagent's session, or nil when no hook
// is configured; close it when the subagent ends.
func (h *Hooks) Child(id, path, agentType string) (*hooks.Runner, error) {
	if r := h.Runner(); r != nil {
		return r.Child(id, path, agentType)
	}
	return nil, nil
}
