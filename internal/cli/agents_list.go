package cli

import (
	"github.com/tiny-agent/tiny-go/internal/agents"
)

// childLabel is how a listing names a subagent's session.
func childLabel(l agents.Link) string {
	label := l.Agent + " subagent of " + shortID(l.Parent)
	if l.Description != "" {
		label += ": " + l.Description
	}
	return label
}

func shortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// isChild reports whether the session at path is a subagent's: --continue
// passes those by (the parent resumes them).
func isChild(path string) bool {
	_, ok := agents.ParentOf(path)
	return ok
}
