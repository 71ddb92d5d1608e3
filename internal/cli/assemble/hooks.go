package assemble

import (
	"context"
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/cli/hookwire"
)

// setupHooks builds the hooks and notifier of this process
// (internal/cli/hookwire) and gives them the session.
func (a *Runner) setupHooks(secretVars []string) error {
	var terminal io.Writer
	if f, ok := a.IO.Stderr.(*os.File); ok && a.Embed == nil && !a.Flags.JSON && term.IsTerminal(int(f.Fd())) {
		terminal = f
	}
	sdk := a.Embed != nil && a.Embed.PermissionMode != nil
	h, err := hookwire.New(hookwire.Options{
		Getenv: a.IO.Getenv, Settings: a.IO.Settings, Cwd: a.Cwd,
		Stderr: a.IO.Stderr, Terminal: terminal,
		Callbacks: a.Embed != nil && a.Embed.CallbackHooks, SDK: sdk,
		Mode: a.permissionModeName, Env: withoutVars(os.Environ(), secretVars),
		Scrub: a.scrubber(secretVars).Scrub, Report: a.hookLine,
		Start: a.Guard.Sandbox().Start,
	})
	if err != nil {
		return err
	}
	a.UserHooks = h
	return h.Attach(a.Store.ID(), a.Store.Path())
}

// sessionStarted runs SessionStart (startup or resume) once the agent is
// built.
func (a *Runner) sessionStarted(ctx context.Context) {
	source := "startup"
	if a.Resumed {
		source = "resume"
	}
	a.UserHooks.Started(ctx, source)
}

// permissionModeName is Claude Code's name of the mode in effect, as the
// hooks' permission_mode says it.
func (a *Runner) permissionModeName() string {
	if a.Embed != nil && a.Embed.PermissionMode != nil {
		return a.Embed.PermissionMode()
	}
	m := a.Guard.Approval()
	if a.Mode != nil {
		m = a.Mode.Mode()
	}
	return hookwire.ClaudePermissionMode(m)
}

// hookLine shows one line about a hook to the user.
func (a *Runner) hookLine(line string) {
	if a.UIObserver.Notice(line) {
		return
	}
	w := a.IO.Stderr
	if s := a.progress(); s != nil {
		w = s.Stderr()
	}
	fmt.Fprintf(w, "%s: %s\n", cmdutil.ProgramName, line)
}
