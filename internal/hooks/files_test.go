package hooks

import (
	"encoding/json"
	"testing"
)

// The patch a PostToolUse hook gets is Claude Code's structuredPatch:
// hunks with their line counts, lines without newlines.
func TestStructuredPatch(t *testing.T) {
	cases := []struct{ before, after, want string }{
		{"hello\nworld\n", "bye\nworld\n", `[{"lines":["-hello","+bye"," world"],"newLines":2,"newStart":1,"oldLines":2,"oldStart":1}]`},
		{"", "x\n", `[{"lines":["+x"],"newLines":1,"newStart":1,"oldLines":0,"oldStart":1}]`},
		{"same\n", "same\n", `[]`},
	}
	for _, c := range cases {
		b, _ := json.Marshal(structuredPatch(c.before, c.after))
		if string(b) != c.want {
			t.Errorf("structuredPatch(%q, %q) = %s; want %s", c.before, c.after, b, c.want)
		}
	}
}
