// Startup: attaching the session and connecting the MCP servers.

package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/tiny-agent/tiny-go/internal/lifecycle"
	"github.com/tiny-agent/tiny-go/internal/mcp"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// start attaches the session, connects MCP servers and builds the agent,
// reporting startup events.
func (a *runner) start(ctx context.Context) error {
	began := time.Now()
	startupStarted := false
	fail := func(errType string, err error) error {
		a.discardCreated()
		if !startupStarted {
			a.sink.Emit(lifecycle.StartupStarted(a.model, a.tools, nonNilStrings(a.mcpAliases)).At(began))
		}
		a.sink.Emit(lifecycle.StartupCompleted(time.Since(began), lifecycle.Failed, errType))
		return err
	}

	envID, err := store.EnvironmentIdentity(a.cwd, a.io.getenv)
	if err != nil {
		return fail("startup_setup_error", fmt.Errorf("environment identity: %w", err))
	}
	if err := a.attach(envID); err != nil {
		return fail("startup_setup_error", err)
	}
	// A resumed session keeps its model unless one is asked for, so that
	// resuming does not change the configuration by accident.
	if a.resumed {
		a.model = resumeModel(a.store.State(), firstNonEmpty(a.flags.model, a.io.getenv("TINY_MODEL"), chosenModel(a.store.Path())))
	}
	a.sink.Emit(lifecycle.StartupStarted(a.model, a.tools, nonNilStrings(a.mcpAliases)).At(began))
	startupStarted = true
	a.sink.Emit(lifecycle.SessionAttached(a.store.ID(), a.resumed))

	// Before the first stdio MCP server starts: its process group is
	// recorded there.
	if err := a.trackProcesses(); err != nil {
		return fail("startup_setup_error", err)
	}
	mcpCtx, stopMCPSignals := interruptible(ctx)
	defer stopMCPSignals()
	mcpOpts := mcpOptions(a.cwd, a.io, a.servers, a.sandbox, a.procs, a.uiObserver)
	if a.embed != nil {
		mcpOpts.Elicit = a.embed.elicit // forms go to the editor (ACP)
	}
	for _, s := range a.servers {
		a.sink.Emit(lifecycle.MCPStarted(s.Alias))
		t0 := time.Now()
		c, err := mcp.Connect(mcpCtx, s, mcpOpts)
		if err != nil {
			kind := "connection_failed"
			var ce *mcp.ConnectError
			if errors.As(err, &ce) && ce.Type != "" {
				kind = ce.Type
			}
			a.sink.Emit(lifecycle.MCPFailed(s.Alias, time.Since(t0), kind))
			if a.mcpAuto {
				fmt.Fprintf(a.io.stderr, "%s: MCP %s: not used: %v (tiny-go mcp list shows the servers)\n", programName, s.Alias, err)
				a.mcpAliases = slices.DeleteFunc(a.mcpAliases, func(x string) bool { return x == s.Alias })
				continue
			}
			return fail("mcp_setup_error", err)
		}
		a.mcp = append(a.mcp, c)
		a.sink.Emit(lifecycle.MCPConnected(s.Alias, time.Since(t0), c.Protocol(), len(c.Tools())))
		if !a.flags.json {
			fmt.Fprintln(a.io.stderr, c.StartupLine())
		}
	}

	if err := a.buildAgent(envID); err != nil {
		return fail("agent_setup_error", err)
	}
	a.sessionStarted(ctx)
	a.sink.Emit(lifecycle.StartupCompleted(time.Since(began), lifecycle.Succeeded, ""))
	return nil
}

// attach opens the session named by --session or --continue, or creates a
// new one.
func (a *runner) attach(envID string) error {
	opts := store.Options{Fsync: a.flags.fsync}
	var err error
	switch {
	case a.flags.session != "":
		if path, perr := store.PathByID(a.cwd, a.flags.session); perr == nil {
			if err := a.finishRewind(path); err != nil {
				return err
			}
		}
		a.store, err = store.Open(a.cwd, a.flags.session, opts)
		a.resumed = true
	case a.flags.cont:
		a.store, err = openNewest(a.cwd, opts, a.finishRewind)
		a.resumed = true
	default:
		a.store, err = store.Create(a.cwd, store.NewHeader{Provider: a.access.name, Model: a.model, EnvironmentIdentity: envID}, opts)
		a.created = err == nil
	}
	if err == nil && a.resumed {
		if w := a.store.IntegrityWarning(); w != "" {
			fmt.Fprintf(a.io.stderr, "%s: warning: %s\n", programName, w)
		}
		if err = checkNotTruncated(a.store); err != nil {
			a.store.Close()
			a.store = nil
		}
	}
	return err
}

// finishRewind completes an interrupted rewind of the session before it
// is resumed (rewind_pending.go).
func (a *runner) finishRewind(path string) error {
	err := finishPendingRewind(context.Background(), path, a.io.getenv, a.io.stderr)
	if errors.Is(err, errRewindInProgress) {
		return fmt.Errorf("session %s is being rewound by another process; wait for it to finish", sessionLabel(path))
	}
	return err
}

// discardCreated removes the session file this process created when
// startup fails before anything but the header was written, so a failed
// start does not leave an empty session for --continue to pick.
func (a *runner) discardCreated() {
	if !a.created || a.store == nil || a.store.State().Facts > 0 || shellJournalled(a.store.Path()) {
		return
	}
	path := a.store.Path()
	_ = a.store.Close()
	a.store = nil
	_ = os.Remove(path)
	// What was kept beside it (a fork's origin, approval answers) belongs
	// to no session now.
	if dir, err := store.SidecarDir(path, false); err == nil && dir != "" {
		_ = os.RemoveAll(dir)
	}
}
