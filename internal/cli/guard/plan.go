package guard

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/planmode"
	"github.com/tiny-agent/tiny-go/internal/sandbox"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// PlanTools applies plan mode (while planning says so) to the offered
// tools: bash in plan mode runs through a read-only sandbox of its own,
// made the first time it is needed (a run that never plans pays nothing
// for it). cfg is the configuration the tools were built with.
func (g *Guard) PlanTools(all []tools.Tool, cfg tools.Config, planning func() bool) []tools.Tool {
	var (
		once sync.Once
		bash tools.Tool
		err  error
	)
	readOnly := func() (tools.Tool, error) {
		once.Do(func() { bash, err = g.readOnlyBash(cfg) })
		return bash, err
	}
	g.readOnly = readOnly
	return planmode.Wrap(all, planmode.Config{Planning: planning, ReadOnlyBash: readOnly})
}

// readOnlyBash is bash confined to a read-only tree. Its temporary
// directory is a scratch directory of its own outside the working tree
// (the system's may hold the tree, and Landlock cannot carve the tree out
// of a writable root).
func (g *Guard) readOnlyBash(cfg tools.Config) (tools.Tool, error) {
	scratch, err := g.planScratch()
	if err != nil {
		return nil, err
	}
	sb, _, err := sandbox.New(sandbox.Policy{Mode: sandbox.ReadOnly, WorkDir: g.o.Cwd, Scratch: scratch, NetworkOff: g.sandbox.NetworkOff(), NetworkRules: g.sandbox.NetworkRules(), Getenv: g.o.Getenv})
	if err != nil {
		return nil, err
	}
	if !sb.Confined() {
		sb.Close()
		return nil, errors.New("this kernel has no Landlock")
	}
	g.planSandbox = sb
	cfg.Plugins, cfg.Sandbox = []string{tools.PluginBash}, sb
	cfg.Env = tools.WithEnv(cfg.Env, "TMPDIR="+scratch)
	ts, err := tools.Builtins(cfg)
	if err != nil {
		return nil, err
	}
	return ts[0], nil
}

// planScratch makes the scratch directory of plan mode's commands;
// removed at exit.
func (g *Guard) planScratch() (string, error) {
	dir, err := g.scratchDir("tiny-go-plan-")
	if err == nil && !within(dir, g.o.Cwd) {
		g.planScratchDir = dir
	}
	return dir, err
}

// scratchDir makes a scratch directory for commands, in the temporary
// directory unless that holds the working tree, else in the user's cache
// directory. Where there is none outside the tree it names a directory
// that does not exist: nothing is writable at all.
func (g *Guard) scratchDir(prefix string) (string, error) {
	for _, base := range []string{os.TempDir(), userCache()} {
		if base == "" || within(g.o.Cwd, base) {
			continue
		}
		if dir, err := os.MkdirTemp(base, prefix); err == nil {
			return dir, nil
		}
	}
	return filepath.Join(g.o.Cwd, ".tiny-agent", "no-scratch-"+prefix), nil
}

func userCache() string {
	d, _ := os.UserCacheDir()
	return d
}

// within reports whether path is dir or under it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// Sealed is where --approval review runs the commands it shows: a
// sandbox with the network off and nothing but the tree (the command's
// overlay) and a scratch directory writable; nil in other modes, or where
// commands are not confined (then review shows only the tree's changes,
// as it says at start).
func (g *Guard) Sealed() (*tools.Sealed, error) {
	if g.approval != approval.Review || !g.sandbox.Confined() {
		return nil, nil
	}
	scratch, err := g.scratchDir("tiny-go-review-")
	if err != nil {
		return nil, err
	}
	g.reviewScratchDir = scratch
	sb, _, err := sandbox.New(sandbox.Policy{Mode: sandbox.Workspace, WorkDir: g.o.Cwd, Scratch: scratch, Sealed: true,
		NetworkOff: true, Getenv: g.o.Getenv, Hidden: g.HiddenPaths()})
	if err != nil {
		return nil, err
	}
	g.reviewSandbox = sb
	// Build caches of the sealed runs live in the scratch directory for
	// the session: a build does not start from nothing each time, and
	// the user's own caches never see a denied command's output.
	for _, d := range []string{"cache/go-build", "cache/npm"} {
		if err := os.MkdirAll(filepath.Join(scratch, d), 0o700); err != nil {
			return nil, err
		}
	}
	return &tools.Sealed{Sandbox: sb, Scratch: scratch, Unsealed: approval.Unsealed,
		Env: []string{"XDG_CACHE_HOME=" + filepath.Join(scratch, "cache"), "GOCACHE=" + filepath.Join(scratch, "cache/go-build"),
			"npm_config_cache=" + filepath.Join(scratch, "cache/npm")}}, nil
}
