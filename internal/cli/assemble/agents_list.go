package assemble

import (
	"github.com/tiny-agent/tiny-go/internal/agents"
)

// childLabel is how a listing names a subagent's session.
func ChildLabel(l agents.Link) string {
	label := l.Agent + " subagent of " + ShortID(l.Parent)
	if l.Description != "" {
		label += ": " + l.Description
	}
	return label
}

func ShortID(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
