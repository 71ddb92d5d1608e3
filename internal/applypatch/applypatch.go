// Package applypatch reads the V4A diffs of OpenAI's apply_patch tool and
// turns them into what tiny-go's own tools take: the content of a created
// file (write) and exact-text replacements of an updated file (edit).
//
// A V4A update diff is a list of sections. A section starts with a line
// "@@" (optionally followed by an anchor, a line found above it in the
// file) and holds lines prefixed " " (context), "-" (removed) and "+"
// (added); "*** End of File" ends a section that reaches the file's end.
// The context and removed lines of a section are contiguous lines of the
// file, so each section becomes one replacement: its old lines by its new
// lines, each line with its newline, so a replacement matches whole lines.
package applypatch

import (
	"errors"
	"fmt"
	"strings"
)

// Edit is one exact-text replacement, as tiny-go's edit tool takes it.
type Edit struct {
	OldText string `json:"oldText"`
	NewText string `json:"newText"`
}

// endOfFile marks a section that reaches the end of the file.
const endOfFile = "*** End of File"

// Content returns the content of a file a create_file diff makes: every
// line is an added line ("+" prefix). A line without the prefix is taken
// as it is (models sometimes drop it on blank lines).
func Content(diff string) string {
	lines := splitLines(diff)
	var b strings.Builder
	for _, l := range lines {
		if l == endOfFile {
			continue
		}
		b.WriteString(strings.TrimPrefix(l, "+"))
		b.WriteByte('\n')
	}
	return b.String()
}

// Edits parses an update_file diff into replacements, one per section
// that changes something, in order.
func Edits(diff string) ([]Edit, error) {
	var out []Edit
	var old, new strings.Builder
	changed := false
	flush := func() error {
		if changed {
			if old.Len() == 0 {
				return errors.New("a section adds lines without any context line to place them")
			}
			out = append(out, Edit{OldText: old.String(), NewText: new.String()})
		}
		old.Reset()
		new.Reset()
		changed = false
		return nil
	}
	for i, l := range splitLines(diff) {
		switch {
		case strings.HasPrefix(l, "@@"), l == endOfFile:
			if err := flush(); err != nil {
				return nil, fmt.Errorf("line %d: %w", i+1, err)
			}
		case l == "", l[0] == ' ':
			line := strings.TrimPrefix(l, " ")
			old.WriteString(line + "\n")
			new.WriteString(line + "\n")
		case l[0] == '-':
			old.WriteString(l[1:] + "\n")
			changed = true
		case l[0] == '+':
			new.WriteString(l[1:] + "\n")
			changed = true
		case strings.HasPrefix(l, "***"):
			return nil, fmt.Errorf("line %d: %q is not part of an update diff", i+1, cut(l))
		default:
			return nil, fmt.Errorf("line %d: %q does not start with \" \", \"-\", \"+\" or \"@@\"", i+1, cut(l))
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("the diff changes nothing")
	}
	return out, nil
}

// splitLines splits text into lines without their terminators (LF or
// CRLF); a final line terminator does not start another line.
func splitLines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func cut(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}
