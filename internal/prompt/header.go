package prompt

import "strings"

// ParseSkillHeader reads the name and description of a SKILL.md header: a
// block that starts at the very first byte with a "---" line and ends at the
// next "---" line. Inside it, only "name:" and "description:" lines whose
// value sits on that same line are read; values are trimmed and one pair of
// surrounding quotes is stripped; every other line is ignored. CRLF line ends
// are accepted.
//
// ok is false unless the block is closed and both values are nonempty. A
// YAML block scalar ("description: |" or ">") is multi-line and therefore not
// read. When a key repeats, the first occurrence wins.
func ParseSkillHeader(text string) (name, description string, ok bool) {
	first, rest, found := strings.Cut(text, "\n")
	if !found || strings.TrimSuffix(first, "\r") != "---" {
		return "", "", false
	}
	closed := false
	for rest != "" {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		line = strings.TrimSuffix(line, "\r")
		if line == "---" {
			closed = true
			break
		}
		if v, isName := headerValue(line, "name:"); isName && name == "" {
			name = v
		} else if v, isDesc := headerValue(line, "description:"); isDesc && description == "" {
			description = v
		}
	}
	if !closed || name == "" || description == "" {
		return "", "", false
	}
	return name, description, true
}

// headerValue returns the single-line value of line if it starts with key.
// The value is empty when there is none on this line.
func headerValue(line, key string) (string, bool) {
	v, found := strings.CutPrefix(line, key)
	if !found {
		return "", false
	}
	v = strings.TrimSpace(v)
	if isBlockScalarIndicator(v) {
		return "", true
	}
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		v = v[1 : len(v)-1]
	}
	return v, true
}

// isBlockScalarIndicator reports whether v is a YAML block scalar header such
// as "|", ">-" or "|2+", whose content would be on the following lines.
func isBlockScalarIndicator(v string) bool {
	if v == "" || (v[0] != '|' && v[0] != '>') {
		return false
	}
	for _, c := range v[1:] {
		if c != '+' && c != '-' && (c < '1' || c > '9') {
			return false
		}
	}
	return true
}
