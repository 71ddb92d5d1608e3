package agents

import (
	"strconv"
	"strings"
)

// quotePlainValues double-quotes the value of each top-level "key: value"
// line whose value is plain text (not quoted, not a list, a map or a
// block scalar), so that YAML reads "description: Use when: x" as Claude
// Code does: the whole rest of the line is the value.
func quotePlainValues(head string) string {
	lines := strings.Split(head, "\n")
	for i, l := range lines {
		if l == "" || l[0] == ' ' || l[0] == '\t' || l[0] == '#' || l[0] == '-' {
			continue
		}
		key, value, ok := strings.Cut(l, ":")
		if !ok || strings.ContainsAny(key, " \t\"'") {
			continue
		}
		v := strings.TrimSpace(value)
		if v == "" || strings.ContainsAny(v[:1], `"'[{|>&*!%@`+"`") {
			continue
		}
		lines[i] = key + ": " + strconv.Quote(v)
	}
	return strings.Join(lines, "\n")
}
