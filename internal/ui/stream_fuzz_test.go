package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// FuzzStreamer streams arbitrary Markdown in arbitrary pieces: the block
// splitter and the committing never panic, nothing is left live after the
// end, and no line is wider than the screen.
func FuzzStreamer(f *testing.F) {
	f.Add("para one\nstill one\n\n```go\nx := 1\n\ny := 2\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n", uint8(7))
	f.Add("- item\n\n  more\n~~~~\n```\n~~~~\n# h\n", uint8(3))
	f.Add("漢字 😀 e\u0301\n\n\n", uint8(1))
	f.Fuzz(func(t *testing.T, text string, step uint8) {
		if len(text) > 4000 {
			return
		}
		var md markdown
		s := newStreamer(&md, 40, 4)
		n := int(step%64) + 1
		var out []string
		for off := 0; off < len(text); off += n {
			s.write(text[off:min(off+n, len(text))])
			out = append(out, s.advance(false)...)
		}
		out = append(out, s.advance(true)...)
		if len(s.live) != 0 {
			t.Fatalf("live lines after the end: %q", s.live)
		}
		for _, l := range out {
			if w := ansi.StringWidth(l); w > 40 {
				t.Fatalf("line of %d cells: %q", w, l)
			}
		}
	})
}

// FuzzHistoryLoad reads arbitrary history files: garbage lines are
// skipped, never an error or a panic.
func FuzzHistoryLoad(f *testing.F) {
	f.Add("\"one\"\n\"two\\nlines\"\n")
	f.Add("not json\n\"ok\"\n\"torn")
	f.Fuzz(func(t *testing.T, content string) {
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, ".tiny-agent"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ".tiny-agent", "history"), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		entries, err := NewHistory(dir).Load()
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if strings.TrimSpace(e) == "" {
				t.Fatalf("a blank entry: %q", entries)
			}
		}
	})
}
