package cli

import (
	"os"

	"github.com/tiny-agent/tiny-go/internal/acp"
	"github.com/tiny-agent/tiny-go/internal/agents"
	"github.com/tiny-agent/tiny-go/internal/cli/sessionview"
	"github.com/tiny-agent/tiny-go/internal/store"
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

// List is session/list of `tiny-go acp`: the sessions of cwd, each
// subagent's right after its parent's.
func (b *acpBackend) List(cwd string) ([]acp.Listed, error) {
	sums, err := store.List(cwd)
	if err != nil {
		return nil, err
	}
	sums, links := sessionview.NestSessions(sums)
	out := make([]acp.Listed, 0, len(sums))
	for _, s := range sums {
		l := acp.Listed{ID: s.ID, Title: s.FirstPrompt, UpdatedAt: s.Started}
		if fi, err := os.Stat(s.Path); err == nil {
			l.UpdatedAt = fi.ModTime()
		}
		if k, ok := links[s.ID]; ok {
			l.Parent, l.Agent, l.Title = k.Parent, k.Agent, childLabel(k)
		}
		out = append(out, l)
	}
	return out, nil
}
