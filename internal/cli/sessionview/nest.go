package sessionview

import (
	"github.com/tiny-agent/tiny-go/internal/agents"
	"github.com/tiny-agent/tiny-go/internal/planmode"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// NestSessions orders a listing so that each subagent's session comes
// right after its parent's (children in their own order), and returns
// the links of the children. A child whose parent is not listed stays
// where it is.
func NestSessions(sums []store.Summary) ([]store.Summary, map[string]agents.Link) {
	links := map[string]agents.Link{}
	listed := map[string]bool{}
	for i, s := range sums {
		// A prompt sent in plan mode is listed without its reminder.
		sums[i].FirstPrompt, sums[i].LastPrompt = planmode.Strip(s.FirstPrompt), planmode.Strip(s.LastPrompt)
		listed[s.ID] = true
		if l, ok := agents.ParentOf(s.Path); ok {
			links[s.ID] = l
		}
	}
	if len(links) == 0 {
		return sums, links
	}
	kids := map[string][]store.Summary{}
	for _, s := range sums {
		if l, ok := links[s.ID]; ok && listed[l.Parent] && l.Parent != s.ID {
			kids[l.Parent] = append(kids[l.Parent], s)
		}
	}
	out := make([]store.Summary, 0, len(sums))
	seen := map[string]bool{}
	var add func(s store.Summary)
	add = func(s store.Summary) {
		if seen[s.ID] {
			return
		}
		seen[s.ID] = true
		out = append(out, s)
		for _, k := range kids[s.ID] {
			add(k)
		}
	}
	for _, s := range sums {
		if l, ok := links[s.ID]; ok && listed[l.Parent] && l.Parent != s.ID {
			continue // listed under its parent
		}
		add(s)
	}
	for _, s := range sums { // a cycle of links: still listed
		add(s)
	}
	return out, links
}
