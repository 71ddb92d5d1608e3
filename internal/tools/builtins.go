package tools

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/tiny-agent/tiny-go/internal/procs"
	"github.com/tiny-agent/tiny-go/internal/sandbox"
)

// The built-in plugin names, in the order they are offered to the model.
const (
	PluginBash  = "bash"
	PluginRead  = "read"
	PluginWrite = "write"
	PluginEdit  = "edit"
	PluginBg    = "bg"
)

// PluginNames returns every built-in plugin name, in order.
func PluginNames() []string {
	return []string{PluginBash, PluginRead, PluginWrite, PluginEdit, PluginBg}
}

// Select implements --plugin: each flag value is a comma-separated list of
// names (blank entries are ignored). It returns the selected names
// deduplicated in the canonical order of PluginNames, so the same set
// always yields the same tool list; no flags select every plugin, while
// flags naming nothing select none. An unknown name is a one-line error.
func Select(flags []string) ([]string, error) {
	all := PluginNames()
	if len(flags) == 0 {
		return all, nil
	}
	chosen := make(map[string]bool)
	for _, flag := range flags {
		for name := range strings.SplitSeq(flag, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			if !isPlugin(name) {
				return nil, &UnknownPluginError{Name: name}
			}
			chosen[name] = true
		}
	}
	selected := make([]string, 0, len(chosen))
	for _, name := range all {
		if chosen[name] {
			selected = append(selected, name)
		}
	}
	return selected, nil
}

// UnknownPluginError is returned by Select for a name that is not a
// built-in. Its text is the exact tools.md message.
type UnknownPluginError struct {
	Name string
}

func (e *UnknownPluginError) Error() string {
	return "Unknown plugin: " + e.Name + ". Available plugins: " + strings.Join(PluginNames(), ", ")
}

func isPlugin(name string) bool { return slices.Contains(PluginNames(), name) }

// Config is what the built-in tools need from the host.
type Config struct {
	// WorkDir is the absolute working directory: relative paths, the
	// shell's directory and .tiny-agent/ resolve against it.
	WorkDir string
	// Plugins are the built-ins to construct, as returned by Select; nil
	// means all of them.
	Plugins []string
	// Background owns the processes bg starts; the host calls its
	// StopAll on exit. Required when bg is selected.
	Background *Manager
	// NewID names the full-output logs of bash; nil means a UUIDv7.
	NewID func() (string, error)
	// Env is the environment of the commands bash and bg run; nil means
	// the process environment. The host leaves its credentials out.
	Env []string
	// Sandbox confines bash and bg commands and the writes of write and
	// edit (tools.md, "Sandbox"); nil confines nothing.
	Sandbox *sandbox.Sandbox
	// Procs marks and records the processes of bash and bg commands, so
	// that those that leave their process group are killed with them (and
	// by the next start after a crash); nil tracks nothing.
	Procs *procs.Tracker
	// Editor, when set, is where read, write and edit read and write the
	// files it offers (an ACP client's buffers); nil means the disk.
	Editor Editor
	// Transactions, when set, runs bash commands as transactions over an
	// overlay of the working directory (txn.go).
	Transactions Transactions
	// Review, with Transactions, shows a command's changes before they
	// reach the tree (--approval review).
	Review Reviewer
	// Sealed, with Review, is where the commands it shows run.
	Sealed *Sealed
}

// Builtins constructs the selected built-in tools in the order of
// cfg.Plugins.
func Builtins(cfg Config) ([]Tool, error) {
	if !filepath.IsAbs(cfg.WorkDir) {
		return nil, fmt.Errorf("tools: working directory %q is not absolute", cfg.WorkDir)
	}
	workDir := filepath.Clean(cfg.WorkDir)
	names := cfg.Plugins
	if names == nil {
		names = PluginNames()
	}
	newID := cfg.NewID
	if newID == nil {
		newID = newUUIDv7
	}
	tools := make([]Tool, 0, len(names))
	for _, name := range names {
		switch name {
		case PluginBash:
			tools = append(tools, bashTool{workDir: workDir, newID: newID, env: cfg.Env, sandbox: cfg.Sandbox, procs: cfg.Procs, txns: cfg.Transactions, review: cfg.Review, sealed: cfg.Sealed})
		case PluginRead:
			tools = append(tools, readTool{workDir: workDir, editor: cfg.Editor})
		case PluginWrite:
			tools = append(tools, writeTool{workDir: workDir, sandbox: cfg.Sandbox, editor: cfg.Editor})
		case PluginEdit:
			tools = append(tools, editTool{workDir: workDir, sandbox: cfg.Sandbox, editor: cfg.Editor})
		case PluginBg:
			if cfg.Background == nil {
				return nil, errors.New("tools: the bg plugin needs Config.Background")
			}
			cfg.Background.setEnv(cfg.Env)
			cfg.Background.setSandbox(cfg.Sandbox)
			cfg.Background.setProcs(cfg.Procs)
			tools = append(tools, bgTool{m: cfg.Background})
		default:
			return nil, fmt.Errorf("tools: unknown plugin %q", name)
		}
	}
	return tools, nil
}

// newUUIDv7 returns a new UUIDv7 as text.
func newUUIDv7() (string, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return "", err
	}
	return id.String(), nil
}
