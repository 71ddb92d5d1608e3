package ui

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/tiny-agent/tiny-go/internal/ui/uitest"
)

// checkTags fails unless out holds each numbered line of the reply
// exactly once, in order.
func checkTags(t *testing.T, out string, letter byte, n int) {
	t.Helper()
	if msg := uitest.CheckTags(ansi.Strip(out), letter, n); msg != "" {
		t.Fatalf("%s\noutput:\n%s", msg, ansi.Strip(out))
	}
}

func TestStreamerCommitsEveryLineOnce(t *testing.T) {
	shapes := []struct {
		name   string
		letter byte
		n      int
	}{{"paragraph", 'P', 150}, {"code", 'C', 300}, {"table", 'T', 40}, {"cjk", 'J', 60}}
	widths := []int{40, 79, 119}
	if testing.Short() {
		widths = []int{79}
	}
	for _, sh := range shapes {
		name, text := sh.name, uitest.Reply(sh.name, sh.n)
		for _, width := range widths {
			if name == "table" && width < 79 {
				continue // glamour squeezes cells of a table wider than the screen
			}
			t.Run(fmt.Sprintf("%s/%d", name, width), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(uint64(width), 7))
				var md markdown
				s := newStreamer(&md, width, 10)
				var out []string
				rest := text
				for rest != "" {
					n := min(len(rest), 1+rng.IntN(200))
					s.write(rest[:n])
					rest = rest[n:]
					out = append(out, s.advance(false)...)
					for _, l := range s.live {
						if w := ansi.StringWidth(l); w > width {
							t.Fatalf("live line of %d cells at width %d: %q", w, width, ansi.Strip(l))
						}
					}
				}
				out = append(out, s.advance(true)...)
				if len(s.live) != 0 {
					t.Fatalf("live lines left after the end: %q", s.live)
				}
				checkTags(t, strings.Join(out, "\n"), sh.letter, sh.n)
				for _, l := range out {
					if w := ansi.StringWidth(l); w > width {
						t.Fatalf("committed line of %d cells at width %d: %q", w, width, ansi.Strip(l))
					}
				}
			})
		}
	}
}

// A resize in the middle keeps the block in progress at its width and
// renders the next blocks at the new one; nothing is lost or doubled.
func TestStreamerResizeMidStream(t *testing.T) {
	var md markdown
	s := newStreamer(&md, 100, 10)
	text := uitest.Reply("paragraph", 40) + "\n" + uitest.Reply("code", 30)
	var out []string
	for i, part := range strings.SplitAfter(text, "\n") {
		s.write(part)
		if i == 20 {
			s.setWidth(50)
		}
		out = append(out, s.advance(false)...)
	}
	out = append(out, s.advance(true)...)
	checkTags(t, strings.Join(out, "\n"), 'P', 40)
	checkTags(t, strings.Join(out, "\n"), 'C', 30)
}

func TestBlockEnd(t *testing.T) {
	tests := []struct {
		src  string
		want int // -1: not yet
	}{
		{"para\n", -1},
		{"para\n\n", -1},
		{"para\n\nnext", -1},
		{"para\n\nnext\n", 6},
		{"- item\n\n  continued\n", -1},
		{"para\n```go\n", 5},
		{"```\ncode\n\nmore\n", -1},
		{"```\ncode\n```\n", 13},
		{"~~~~\n```\n~~~~\n", 14},
	}
	for _, tt := range tests {
		got, ok := blockEnd(tt.src, 0)
		if !ok {
			got = -1
		}
		if got != tt.want {
			t.Errorf("blockEnd(%q) = %d, want %d", tt.src, got, tt.want)
		}
	}
}

func TestTrimStyledRight(t *testing.T) {
	in := "  \x1b[38;5;252mHello\x1b[m\x1b[38;5;252m \x1b[m\x1b[38;5;252m \x1b[m"
	got := trimStyledRight(in)
	if ansi.Strip(got) != "  Hello" || !strings.HasSuffix(got, "\x1b[m") {
		t.Errorf("trimStyledRight = %q", got)
	}
}

// A fenced block streamed in pieces and committed chunk by chunk prints
// what the whole reply renders: its label once, and a comment and raw
// string that span chunks coloured as one.
func TestStreamedCodeIsHighlightedAsTheWholeBlock(t *testing.T) {
	var code strings.Builder
	for i := range 12 {
		fmt.Fprintf(&code, "// step %d\nfunc f%d() string {\n\t/* a comment\n\tover lines */\n\treturn `raw\n\n\tstring %d`\n}\n", i, i, i)
	}
	text := "Intro.\n\n```go\n" + code.String() + "```\n\nAfter.\n"
	md := markdown{profile: colorprofile.TrueColor}
	want := renderLines(md.render(text, 79))
	for seed := range uint64(5) {
		rng := rand.New(rand.NewPCG(seed, 3))
		s := newStreamer(&md, 79, 10)
		var out []string
		for rest := text; rest != ""; {
			n := min(len(rest), 1+rng.IntN(60))
			s.write(rest[:n])
			rest = rest[n:]
			out = append(out, s.advance(false)...)
		}
		out = append(out, s.advance(true)...)
		if strings.Join(out, "\n") != strings.Join(want, "\n") {
			for i := range max(len(out), len(want)) {
				var o, w string
				if i < len(out) {
					o = out[i]
				}
				if i < len(want) {
					w = want[i]
				}
				if o != w {
					t.Fatalf("seed %d: line %d of %d/%d:\nstreamed %q\nwhole    %q", seed, i, len(out), len(want), o, w)
				}
			}
		}
	}
	if n := strings.Count(ansi.Strip(strings.Join(want, "\n")), "  Go\n"); n != 1 {
		t.Errorf("%d labels", n)
	}
	if !strings.Contains(strings.Join(want, "\n"), "\x1b[38;2;198;120;221mfunc") {
		t.Errorf("no colours: %q", want)
	}
}
