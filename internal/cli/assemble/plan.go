package assemble

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/tiny-agent/tiny-go/internal/planmode"
	"github.com/tiny-agent/tiny-go/internal/sandbox"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// planTools applies plan mode to the offered tools: bash in plan mode
// runs through a read-only sandbox of its own, made the first time it is
// needed (a run that never plans pays nothing for it).
func (a *Runner) planTools(all []tools.Tool, cfg tools.Config) []tools.Tool {
	var (
		once sync.Once
		bash tools.Tool
		err  error
	)
	readOnly := func() (tools.Tool, error) {
		once.Do(func() { bash, err = a.readOnlyBash(cfg) })
		return bash, err
	}
	a.readOnly = readOnly
	return planmode.Wrap(all, planmode.Config{Planning: a.Mode.Planning, ReadOnlyBash: readOnly})
}

// readOnlyBash is bash confined to a read-only tree. Its temporary
// directory is a scratch directory of its own outside the working tree
// (the system's may hold the tree, and Landlock cannot carve the tree out
// of a writable root).
func (a *Runner) readOnlyBash(cfg tools.Config) (tools.Tool, error) {
	scratch, err := a.planScratch()
	if err != nil {
		return nil, err
	}
	sb, _, err := sandbox.New(sandbox.Policy{Mode: sandbox.ReadOnly, WorkDir: a.Cwd, Scratch: scratch, NetworkOff: a.Sandbox.NetworkOff(), NetworkRules: a.Sandbox.NetworkRules(), Getenv: a.IO.Getenv})
	if err != nil {
		return nil, err
	}
	if !sb.Confined() {
		sb.Close()
		return nil, errors.New("this kernel has no Landlock")
	}
	a.planSandbox = sb
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
func (a *Runner) planScratch() (string, error) {
	dir, err := a.scratchDir("tiny-go-plan-")
	if err == nil && !within(dir, a.Cwd) {
		a.planScratchDir = dir
	}
	return dir, err
}

// scratchDir makes a scratch directory for commands, in the temporary
// directory unless that holds the working tree, else in the user's cache
// directory. Where there is none outside the tree it names a directory
// that does not exist: nothing is writable at all.
func (a *Runner) scratchDir(prefix string) (string, error) {
	for _, base := range []string{os.TempDir(), userCache()} {
		if base == "" || within(a.Cwd, base) {
			continue
		}
		if dir, err := os.MkdirTemp(base, prefix); err == nil {
			return dir, nil
		}
	}
	return filepath.Join(a.Cwd, ".tiny-agent", "no-scratch-"+prefix), nil
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

// withoutReminders is msgs with the plan-mode reminder taken out of the
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
