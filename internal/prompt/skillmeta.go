package prompt

import (
	"strings"
)

// skillMeta is what a SKILL.md header says.
type skillMeta struct {
	name, description string
	allowedTools      []string
}

// parseSkillMeta reads a SKILL.md header leniently, as Claude Code does:
// the "---" block at the very start (CRLF accepted) with name,
// description and allowed-tools, where a value may hold an unquoted ": ",
// be quoted, or be a block scalar (| or >) on the indented lines that
// follow; allowed-tools is a comma separated line or a "- item" list. A
// missing name is the skill's directory name (Claude Code's default). ok
// is false without a closed block or a description.
func parseSkillMeta(text, dirName string) (m skillMeta, ok bool) {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	if len(lines) == 0 || lines[0] != "---" {
		return m, false
	}
	end := -1
	for i := 1; i < len(lines); i++ {
		if strings.TrimRight(lines[i], " \t") == "---" {
			end = i
			break
		}
	}
	if end < 0 {
		return m, false
	}
	block := lines[1:end]
	for i := 0; i < len(block); i++ {
		key, value, found := strings.Cut(block[i], ":")
		if !found || key != strings.TrimSpace(key) || key == "" {
			continue // an indented continuation, a comment, a blank line
		}
		value = strings.TrimSpace(value)
		var more []string
		for i+1 < len(block) && (block[i+1] == "" || block[i+1][0] == ' ' || block[i+1][0] == '\t') {
			i++
			more = append(more, block[i])
		}
		switch key {
		case "name":
			m.name = scalar(value, more)
		case "description":
			m.description = scalar(value, more)
		case "allowed-tools", "allowed_tools":
			m.allowedTools = toolList(value, more)
		}
	}
	if m.name == "" {
		m.name = dirName
	}
	return m, m.name != "" && m.description != ""
}

// scalar is a YAML scalar value: quoted, plain (continued on indented
// lines), or a block scalar.
func scalar(value string, more []string) string {
	if isBlockScalarIndicator(value) {
		sep := " "
		if value[0] == '|' {
			sep = "\n"
		}
		var parts []string
		for _, l := range more {
			parts = append(parts, strings.TrimSpace(l))
		}
		return strings.TrimSpace(strings.Join(parts, sep))
	}
	if len(value) >= 2 && (value[0] == '"' || value[0] == '\'') && value[len(value)-1] == value[0] {
		return value[1 : len(value)-1]
	}
	for _, l := range more {
		if t := strings.TrimSpace(l); t != "" {
			value += " " + t
		}
	}
	return strings.TrimSpace(value)
}

// toolList is allowed-tools: "Read, Grep, Bash(git:*)", a flow list
// "[Read, Grep]", or a block list of "- Read" lines.
func toolList(value string, more []string) []string {
	var items []string
	if value != "" {
		value = strings.TrimSuffix(strings.TrimPrefix(value, "["), "]")
		items = splitTools(value)
	}
	for _, l := range more {
		if t, ok := strings.CutPrefix(strings.TrimSpace(l), "- "); ok {
			items = append(items, unquote(strings.TrimSpace(t)))
		}
	}
	return items
}

// splitTools splits at commas (and spaces between tools) outside
// parentheses: "Bash(git add:*), Read Grep".
func splitTools(s string) []string {
	var out []string
	depth, start := 0, 0
	flush := func(end int) {
		if t := unquote(strings.TrimSpace(s[start:end])); t != "" {
			out = append(out, t)
		}
		start = end + 1
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '(':
			depth++
		case c == ')':
			depth--
		case depth == 0 && (c == ',' || c == ' '):
			flush(i)
		}
	}
	flush(len(s))
	return out
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}
