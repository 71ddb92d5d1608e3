package termmd

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// wrap breaks styled text into lines of at most width cells, at spaces
// where it can and inside a word where it must, and makes every line carry
// its own style: the state in force at a line break is reset at the end of
// the line and set again at the start of the next.
func wrap(s string, width int) []string {
	if s == "" {
		return nil
	}
	lines := strings.Split(ansi.Wrap(s, width, ""), "\n")
	for i := 0; i < len(lines); i++ {
		// ansi.Wrap can leave a line too wide (a hyphen after two
		// spaces stays on the line: "word  -"); such a line is broken
		// where the width ends.
		if ansi.StringWidth(lines[i]) > width {
			parts := strings.Split(ansi.Hardwrap(lines[i], width, false), "\n")
			lines = append(lines[:i], append(parts, lines[i+1:]...)...)
			i += len(parts) - 1
		}
	}
	return carryStyle(lines)
}

// wrapVerbatim breaks each line of s that is wider than width, keeping its
// spaces, and colours every resulting line with params ("" for none).
func wrapVerbatim(s string, width int, params string) []string {
	var out []string
	for _, line := range strings.Split(s, "\n") {
		line = clean(line)
		for _, l := range strings.Split(ansi.Hardwrap(line, width, true), "\n") {
			if params != "" {
				l = sgr(params, l)
			}
			out = append(out, l)
		}
	}
	return out
}

// carryStyle makes each line self-contained, given text whose every SGR
// sequence sets the whole state (as inliner writes it).
func carryStyle(lines []string) []string {
	state := "" // the last SGR sequence in force, "" when none
	for i, l := range lines {
		if state != "" && !strings.HasPrefix(l, "\x1b[") {
			l = state + l
		}
		if last := lastSGR(l); last != "" {
			state = last
			if state == "\x1b[0m" {
				state = ""
			}
		}
		if state != "" {
			l += "\x1b[0m"
		}
		lines[i] = strings.TrimRight(l, " ")
	}
	return lines
}

// lastSGR is the last "ESC [ ... m" sequence of s, or "".
func lastSGR(s string) string {
	for end := len(s); ; {
		i := strings.LastIndex(s[:end], "\x1b[")
		if i < 0 {
			return ""
		}
		j := i + 2
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == ';') {
			j++
		}
		if j < len(s) && s[j] == 'm' {
			return s[i : j+1]
		}
		end = i
	}
}
