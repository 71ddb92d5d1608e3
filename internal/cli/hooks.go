package cli

import (
	"context"
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/tiny-agent/tiny-go/internal/cli/hookwire"
)

// setupHooks builds the hooks and notifier of this process
// (internal/cli/hookwire) and gives them the session.
func (a *runner) setupHooks(secretVars []string) error {
	var terminal io.Writer
	if f, ok := a.io.stderr.(*os.File); ok && a.embed == nil && !a.flags.json && term.IsTerminal(int(f.Fd())) {
		terminal = f
	}
	sdk := a.embed != nil && a.embed.permissionMode != nil
	h, err := hookwire.New(hookwire.Options{
		Getenv: a.io.getenv, Settings: a.io.settings, Cwd: a.cwd,
		Stderr: a.io.stderr, Terminal: terminal,
		Callbacks: a.embed != nil && a.embed.callbackHooks, SDK: sdk,
		Mode: a.permissionModeName, Env: withoutVars(os.Environ(), secretVars),
		Scrub: a.scrubber(secretVars).Scrub, Report: a.hookLine,
		Start: a.sandbox.Start,
	})
	if err != nil {
		return err
	}
	a.userHooks = h
	return h.Attach(a.store.ID(), a.store.Path())
}

// sessionStarted runs SessionStart (startup or resume) once the agent is
// built.
func (a *runner) sessionStarted(ctx context.Context) {
	source := "startup"
	if a.resumed {
		source = "resume"
	}
	a.userHooks.Started(ctx, source)
}

// permissionModeName is Claude Code's name of the mode in effect, as the
// hooks' permission_mode says it.
func (a *runner) permissionModeName() string {
	if a.embed != nil && a.embed.permissionMode != nil {
		return a.embed.permissionMode()
	}
	m := a.approval
	if a.mode != nil {
		m = a.mode.Mode()
	}
	return hookwire.ClaudePermissionMode(m)
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
