package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"golang.org/x/term"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/config"
	"github.com/tiny-agent/tiny-go/internal/hooks"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// userHooks is the wiring of internal/hooks into a runner: the hooks in
// effect, the terminal notifier, and the manual-compaction flag.
type userHooks struct {
	run      *hooks.Runner // nil when no hook is configured
	notifier *hooks.Notifier
	after    time.Duration
	// manual is set while /compact runs, for PreCompact's trigger;
	// instructions are what followed /compact (custom_instructions).
	manual       atomic.Bool
	instructions atomic.Pointer[string]
}

// manualCompact marks a /compact with its instructions until the
// returned function is called.
func (u *userHooks) manualCompact(instructions string) func() {
	if u == nil {
		return func() {}
	}
	u.manual.Store(true)
	u.instructions.Store(&instructions)
	return func() {
		u.manual.Store(false)
		u.instructions.Store(nil)
	}
}

// customInstructions are the instructions of the /compact running now.
func (u *userHooks) customInstructions() string {
	if p := u.instructions.Load(); p != nil {
		return *p
	}
	return ""
}

// loadHookConfig reads the hooks in effect for cwd: Claude Code's
// settings files, then the [hooks] tables of config.toml.
func loadHookConfig(io stdio, cwd string) (*hooks.Config, string) {
	home := io.getenv("HOME")
	project := hooks.ProjectDir(cwd, home)
	var tables []hooks.Table
	if io.settings != nil {
		for _, t := range io.settings.HookTables() {
			tables = append(tables, hooks.Table{Source: t.Source.String(), JSON: t.JSON})
		}
	}
	return hooks.Load(hooks.SettingsFiles(home, project), tables), project
}

// setupHooks builds the hooks runner and notifier of this process.
func (a *runner) setupHooks(secretVars []string) error {
	cfg, project := loadHookConfig(a.io, a.cwd)
	for _, p := range cfg.Problems {
		fmt.Fprintf(a.io.stderr, "%s: %s\n", programName, p)
	}
	u := &userHooks{after: hooks.DefaultNotifyAfter}
	a.userHooks = u
	if err := u.configureNotify(a); err != nil {
		return err
	}
	if len(cfg.Hooks) == 0 && (a.embed == nil || !a.embed.callbackHooks) {
		return nil
	}
	failClosed := false
	if v := a.io.getenv(config.EnvVar(config.HookFailClosed)); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return usageErrorf("%s must be true or false", config.EnvVar(config.HookFailClosed))
		}
		failClosed = b
	}
	mode := func() string {
		if a.embed != nil && a.embed.permissionMode != nil {
			return a.embed.permissionMode()
		}
		m := a.approval
		if a.mode != nil {
			m = a.mode.Mode()
		}
		return claudePermissionMode(m)
	}
	scrub := a.scrubber(secretVars)
	entry := "cli"
	if a.embed != nil && a.embed.permissionMode != nil {
		entry = "sdk-cli" // print mode and the Agent SDKs, as Claude Code says
	}
	u.run = hooks.New(hooks.Options{
		Entrypoint: entry,
		Config:     cfg, Cwd: a.cwd, ProjectDir: project,
		Env: withoutVars(os.Environ(), secretVars), Scrub: scrub.Scrub,
		Mode: mode, FailClosed: failClosed, Report: a.hookLine,
		// Contained as commands are, without their overlay: a hook's
		// writes are not part of any command's transaction.
		Start: a.sandbox.Start,
	})
	return u.run.Attach(a.store.ID(), a.store.Path())
}

// configureNotify reads notify and notify_after; the terminal is stderr,
// when it is one (never in ACP or --json runs).
func (u *userHooks) configureNotify(a *runner) error {
	style := a.io.getenv(config.EnvVar(config.Notify))
	switch style {
	case "":
		style = hooks.NotifyBell
	case hooks.NotifyOff, hooks.NotifyBell, hooks.NotifyOSC9, hooks.NotifyOSC777:
	default:
		return usageErrorf("%s must be off, bell, osc9 or osc777", config.EnvVar(config.Notify))
	}
	if v := a.io.getenv(config.EnvVar(config.NotifyAfter)); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return usageErrorf("%s must be a positive duration such as 30s", config.EnvVar(config.NotifyAfter))
		}
		u.after = d
	}
	u.notifier = &hooks.Notifier{Style: style}
	if f, ok := a.io.stderr.(*os.File); ok && a.embed == nil && !a.flags.json && term.IsTerminal(int(f.Fd())) {
		u.notifier.W = f
	}
	return nil
}

// agentHooks is the agent's HookRunner: nil (not a nil pointer) without
// hooks, so the agent skips them entirely.
func (u *userHooks) agentHooks() agent.HookRunner {
	if u == nil || u.run == nil {
		return nil
	}
	return u.run
}

// hookLine shows one line about a hook to the user.
func (a *runner) hookLine(line string) {
	if a.uiObserver.Notice(line) {
		return
	}
	w := a.io.stderr
	if s := a.progress(); s != nil {
		w = s.Stderr()
	}
	fmt.Fprintf(w, "%s: %s\n", programName, line)
}

// sessionStarted runs SessionStart (startup or resume) once the agent is
// built.
func (a *runner) sessionStarted(ctx context.Context) {
	if a.userHooks == nil || a.userHooks.run == nil {
		return
	}
	source := "startup"
	if a.resumed {
		source = "resume"
	}
	a.userHooks.run.SessionStarted(ctx, source)
}

// sessionEnded runs SessionEnd as the process lets the session go.
func (a *runner) sessionEnded(reason string) {
	if a.userHooks == nil || a.userHooks.run == nil || a.store == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), hooks.DefaultTimeout)
	defer cancel()
	a.userHooks.run.SessionEnded(ctx, reason)
	_ = a.userHooks.run.Close()
}

// sessionSwitching runs SessionEnd for the session /clear or /resume
// leaves.
func (a *runner) sessionSwitching(reason string) {
	if u := a.userHooks; u != nil && u.run != nil {
		u.run.SessionEnded(context.Background(), reason)
	}
}

// sessionSwitched runs SessionStart for the session /clear or /resume
// switched to (source clear or resume).
func (a *runner) sessionSwitched(source string) {
	if u := a.userHooks; u != nil && u.run != nil {
		u.run.SessionStarted(context.Background(), source)
	}
}

// attachHooks gives the hooks the current session (a switch of session).
func (a *runner) attachHooks() error {
	if u := a.userHooks; u != nil && u.run != nil {
		return u.run.Attach(a.store.ID(), a.store.Path())
	}
	return nil
}

// hookEvents is the agent event sink for hooks: PreCompact and
// PostCompact around a compaction (then SessionStart with source
// compact), and a notification when a long turn ends.
func (a *runner) hookEvents() func(agent.Event) {
	u := a.userHooks
	return func(ev agent.Event) {
		ctx := context.Background()
		switch e := ev.(type) {
		case agent.OperationStarted:
			if e.Kind == session.OperationCompaction && u.run != nil {
				u.run.Compacting(ctx, u.trigger(), u.customInstructions(), false)
			}
		case agent.OperationCompleted:
			if e.Result.Kind == session.OperationCompaction && u.run != nil {
				u.run.Compacting(ctx, u.trigger(), u.customInstructions(), true)
				if e.Result.Outcome == session.OutcomeCompleted {
					u.run.SessionStarted(ctx, "compact")
				}
			}
			if e.Result.Kind == session.OperationRun && e.Outcome.Duration >= u.after {
				u.notify(ctx, "idle_prompt", fmt.Sprintf("tiny-go finished a turn (%s)", e.Outcome.Duration.Round(time.Second)))
			}
		}
	}
}

func (u *userHooks) trigger() string {
	if u.manual.Load() {
		return "manual"
	}
	return "auto"
}

// notify tells the terminal and runs the Notification hooks.
func (u *userHooks) notify(ctx context.Context, kind, message string) {
	u.notifier.Notify(message)
	if u.run != nil {
		u.run.Notified(ctx, kind, message)
	}
}

// hookedApprove runs the PermissionRequest hooks before a call's approval
// is asked: a hook that decides answers for the user.
func (a *runner) hookedApprove(f agent.ApproveFunc) agent.ApproveFunc {
	u := a.userHooks
	if f == nil || u == nil || u.run == nil || !u.run.Any(hooks.PermissionRequest) {
		return f
	}
	return func(ctx context.Context, req agent.ApprovalRequest) (agent.Approval, error) {
		call := agent.HookCall{ToolCallID: req.ToolCallID, Tool: req.Tool, Arguments: req.Arguments}
		if p := u.run.PermissionRequested(ctx, call); p.Decided {
			if !p.Allow && p.Message == "" {
				p.Message = "a PermissionRequest hook denied it"
			}
			return agent.Approval{Allow: p.Allow, Reason: p.Message}, nil
		}
		return f(ctx, req)
	}
}

// notifyingAsk notifies before the user is asked to approve a call.
func (a *runner) notifyingAsk(ask approval.AskFunc) approval.AskFunc {
	return func(ctx context.Context, p approval.Prompt) (approval.Answer, error) {
		if u := a.userHooks; u != nil {
			u.notify(ctx, "permission_prompt", "tiny-go needs your permission to use "+p.Tool)
		}
		return ask(ctx, p)
	}
}

// printHooks is the hooks part of `tiny-go config`: each hook, its
// matcher and where it came from, then what cannot be used.
func printHooks(w io.Writer, cfg *hooks.Config) error {
	fmt.Fprintln(w)
	if len(cfg.Hooks) == 0 {
		fmt.Fprintln(w, "hooks: none (.claude/settings.json, .claude/settings.local.json, ~/.claude/settings.json, [hooks] of config.toml)")
	} else {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "HOOK\tMATCHER\tCOMMAND\tTIMEOUT\tFROM")
		for _, h := range cfg.Hooks {
			m := h.Matcher
			if m == "" {
				m = "*"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", h.Event, m, oneLine(h.Command), h.Timeout, h.Source)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, p := range cfg.Problems {
		fmt.Fprintf(w, "hook problem: %s\n", p)
	}
	return nil
}

// claudePermissionMode is Claude Code's name of an approval mode.
func claudePermissionMode(m approval.Mode) string {
	switch m {
	case approval.Auto:
		return "bypassPermissions"
	case approval.Edits:
		return "acceptEdits"
	case approval.Plan:
		return "plan"
	}
	return "default"
}

// childHooks is a hooks runner for a subagent's session, or nil when no
// hook is configured; close it when the subagent ends.
func (u *userHooks) childHooks(id, path, agentType string) (*hooks.Runner, error) {
	if u == nil || u.run == nil {
		return nil, nil
	}
	return u.run.Child(id, path, agentType)
}
