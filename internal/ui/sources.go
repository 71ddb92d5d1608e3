package ui

import (
	"fmt"

	"github.com/tiny-agent/tiny-go/internal/provider"
)

// maxSources bounds the list shown under a reply.
const maxSources = 10

// SourceLines is the compact list of the pages a reply's web search cited:
// "Sources:" and one numbered line each, title then URL; nil for none.
func SourceLines(ss []provider.Source) []string {
	if len(ss) == 0 {
		return nil
	}
	lines := []string{"Sources:"}
	for i, s := range ss {
		if i == maxSources {
			lines = append(lines, fmt.Sprintf("  … and %d more", len(ss)-maxSources))
			break
		}
		title := sanitizeLine(s.Title)
		if r := []rune(title); len(r) > 80 {
			title = string(r[:79]) + "…"
		}
		if title == "" {
			lines = append(lines, fmt.Sprintf("  %d. %s", i+1, sanitizeLine(s.URL)))
			continue
		}
		lines = append(lines, fmt.Sprintf("  %d. %s — %s", i+1, title, sanitizeLine(s.URL)))
	}
	return lines
}
