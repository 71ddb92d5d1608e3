// Package guard decides who may do what and where commands run: Claude
// Code's permission rules, the approval mode and gate, and the sandboxes
// (main, plan mode's read-only one, review's sealed one) with their
// scratch directories.
package guard

import (
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/procs"
	"github.com/tiny-agent/tiny-go/internal/sandbox"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// Options are what a guard is built from.
type Options struct {
	Cwd    string
	Getenv func(string) string
	Stderr io.Writer
	// Approval is --approval (or the approval setting); "" lets the
	// rules' defaultMode choose.
	Approval string
	// UI is set when the terminal UI shows the run; JSON is --json.
	UI, JSON bool
	Sandbox  SandboxFlags
}

// Guard holds the rules, the approval mode at start and the sandboxes of
// one run; Close releases the sandboxes and scratch directories.
type Guard struct {
	o        Options
	perms    *Permissions
	approval approval.Mode
	sandbox  *sandbox.Sandbox
	// planSandbox is bash's in plan mode, once made (plan.go);
	// reviewSandbox runs --approval review's sealed commands (sealed.go).
	planSandbox      *sandbox.Sandbox
	planScratchDir   string
	reviewSandbox    *sandbox.Sandbox
	reviewScratchDir string
	// readOnly is bash with the tree read-only (plan mode, explore).
	readOnly func() (tools.Tool, error)
	// procs records this run's command processes; closing it kills
	// leftovers.
	procs *procs.Tracker
}

// New reads the permission rules and resolves the approval mode,
// printing what cannot be used to o.Stderr; OpenSandbox then prepares the
// sandbox.
func New(o Options) (*Guard, error) {
	g := &Guard{o: o}
	g.configurePermissions()
	if err := g.configureApproval(); err != nil {
		return nil, err
	}
	return g, nil
}

// interactive reports whether a user can be asked in the terminal.
func (g *Guard) interactive() bool { return g.o.UI && !g.o.JSON }

// configureApproval resolves --approval: ask by default in interactive
// mode (no prompt), auto in one-shot and --json mode.
func (g *Guard) configureApproval() error {
	g.approval = approval.Auto
	if g.interactive() {
		g.approval = approval.Ask
	}
	if g.o.Approval == "" {
		return nil
	}
	m, err := approval.ParseMode(g.o.Approval)
	if err != nil {
		return cmdutil.UsageError{Err: err}
	}
	g.approval = m
	return nil
}

// Approval is the approval mode the run started in.
func (g *Guard) Approval() approval.Mode {
	if g == nil {
		return ""
	}
	return g.approval
}

// Sandbox confines commands and file writes.
func (g *Guard) Sandbox() *sandbox.Sandbox {
	if g == nil {
		return nil
	}
	return g.sandbox
}

// ReadOnly is bash with the tree read-only, made at its first use; nil
// before PlanTools.
func (g *Guard) ReadOnly() func() (tools.Tool, error) { return g.readOnly }

// TrackProcesses kills what an earlier run in this directory left behind
// when it was killed, then starts this run's process record; once (the
// first call is before the MCP servers start).
func (g *Guard) TrackProcesses() error {
	if g.procs != nil {
		return nil
	}
	var err error
	g.procs, err = cmdutil.TrackProcesses(g.o.Cwd, g.o.Stderr)
	return err
}

// Procs is this run's process record (nil before TrackProcesses); the
// caller closes it before the sandboxes, while it can still kill.
func (g *Guard) Procs() *procs.Tracker {
	if g == nil {
		return nil
	}
	return g.procs
}

// Close releases the sandboxes and removes the scratch directories; last
// on exit, since the sandbox's thread started the commands, whose
// Pdeathsig fires when it ends.
func (g *Guard) Close() {
	if g == nil {
		return
	}
	g.sandbox.Close()
	g.planSandbox.Close()
	g.reviewSandbox.Close()
	for _, d := range []string{g.planScratchDir, g.reviewScratchDir} {
		if d != "" {
			_ = os.RemoveAll(d)
		}
	}
}

// OpenSandbox validates the sandbox flags and prepares the sandbox of
// cwd, printing its warning line, if any, to stderr. The caller does it
// last, so that nothing after it fails and the sandbox is always closed.
func (g *Guard) OpenSandbox() error {
	f := g.o.Sandbox
	mode, err := sandbox.ParseMode(f.Mode)
	if err != nil {
		return cmdutil.UsageError{Err: err}
	}
	if f.Network != "on" && f.Network != "off" && f.Network != "rules" {
		return cmdutil.UsageErrorf("--network must be on, off or rules, not %q", f.Network)
	}
	if mode != sandbox.Workspace && len(f.Writable) > 0 {
		return cmdutil.UsageErrorf("--writable needs --sandbox workspace")
	}
	p := sandbox.Policy{
		Mode:       mode,
		WorkDir:    g.o.Cwd,
		Writable:   append(append([]string(nil), f.Writable...), g.additionalDirectories()...),
		NetworkOff: f.Network == "off",
		Getenv:     g.o.Getenv,
		Hidden:     g.HiddenPaths(),
	}
	if f.Network == "rules" {
		p.NetworkRules = g.networkProxy()
	}
	sb, warning, err := sandbox.New(p)
	if err != nil {
		return cmdutil.UsageError{Err: err}
	}
	if warning != "" {
		fmt.Fprintln(g.o.Stderr, warning)
	}
	if line := sandbox.PlatformLine(runtime.GOOS, sb.Confined()); line != "" {
		fmt.Fprintln(g.o.Stderr, line)
	}
	g.sandbox = sb
	g.warnUnhidden()
	return nil
}
