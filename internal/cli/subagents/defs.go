package subagents

import (
	"os"

	"github.com/tiny-agent/tiny-go/internal/agents"
	"github.com/tiny-agent/tiny-go/internal/todo"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// Load reads the agent definitions a run in cwd offers (the project's,
// then the user's); problems are the files that cannot be used, one line
// each.
func Load(cwd string) (defs []agents.Definition, problems []string) {
	home, _ := os.UserHomeDir()
	return agents.Load(agents.Dirs(cwd, home)...)
}

// AgentTools are the agent tools a run in cwd offers by default, as
// `session list` compares a session's configuration with them.
func AgentTools(cwd string) []tools.Tool {
	defs, _ := Load(cwd)
	return []tools.Tool{todo.Tool{}, agents.NewTool(defs, nil)}
}

// ChildLabel is how a listing names a subagent's session.
func ChildLabel(l agents.Link) string {
	label := l.Agent + " subagent of " + ShortID(l.Parent)
	if l.Description != "" {
		label += ": " + l.Description
	}
	return label
}

// ShortID is a session id as listings show it: its first 8 characters.
func ShortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// IsChild reports whether the session at path is a subagent's: --continue
// passes those by (the parent resumes them).
func IsChild(path string) bool {
	_, ok := agents.ParentOf(path)
	return ok
}
