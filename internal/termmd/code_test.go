package termmd

import (
	"regexp"
	"strings"
	"testing"

	"github.com/charmbracelet/colorprofile"
)

var sgrParams = regexp.MustCompile("\x1b\\[([0-9;]*)m")

func TestFencedCodeIsHighlightedUnderALabel(t *testing.T) {
	src := "Text.\n\n```go\nfunc main() {\n\tfmt.Println(\"hi\") // greet\n}\n```\n\n```python\ndef f():\n    return 1\n```\n"
	out := RenderWith(src, Options{Width: 60, Profile: colorprofile.ANSI256})
	for _, want := range []string{
		"  \x1b[0;" + darkPalette.rule + "mGo\x1b[0m", // the label
		"\x1b[38;5;170mfunc\x1b[0m",                   // keyword
		"\x1b[38;5;114m\"hi\"\x1b[0m",                 // string
		"\x1b[3;38;5;244m// greet\x1b[0m",             // comment
		"  \x1b[0;" + darkPalette.rule + "mPython\x1b[0m",
		"\x1b[38;5;170mdef\x1b[0m",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%q", want, out)
		}
	}
	if got, want := plain(out), "  Text.\n\n    Go\n    func main() {\n        fmt.Println(\"hi\") // greet\n    }\n\n    Python\n    def f():\n        return 1"; got != want {
		t.Errorf("text:\n%s\nwant:\n%s", got, want)
	}
	light := RenderWith(src, Options{Width: 60, Light: true, Profile: colorprofile.TrueColor})
	if !strings.Contains(light, "\x1b[38;2;166;38;164mfunc") {
		t.Errorf("light true colour: %q", light)
	}
}

func TestCodeColoursFollowTheProfile(t *testing.T) {
	src := "# H\n\nSome `code` and a [link](u).\n\n```rust\nfn main() { let s = \"x\"; }\n```\n"
	// 16 colours: every SGR of the whole reply is among the 16.
	for _, m := range sgrParams.FindAllStringSubmatch(RenderWith(src, Options{Width: 60, Profile: colorprofile.ANSI}), -1) {
		for p := range strings.SplitSeq(m[1], ";") {
			if p == "38" || p == "48" || p == "5" || p == "2" && strings.Contains(m[1], "38;2") {
				t.Errorf("16 colours: %q", m[0])
			}
		}
	}
	if out := RenderWith(src, Options{Width: 60, Profile: colorprofile.ANSI}); !strings.Contains(out, "35mfn") {
		t.Errorf("16 colours: keyword not magenta: %q", out)
	}
	// NO_COLOR (Ascii): no colour at all, bold stays.
	for _, m := range sgrParams.FindAllStringSubmatch(RenderWith(src, Options{Width: 60, Profile: colorprofile.Ascii}), -1) {
		for p := range strings.SplitSeq(m[1], ";") {
			if p != "" && p != "0" && p != "1" && p != "3" && p != "4" && p != "9" {
				t.Errorf("NO_COLOR: %q", m[0])
			}
		}
	}
	if out := RenderWith(src, Options{Width: 60, Profile: colorprofile.NoTTY}); strings.Contains(out, "\x1b") {
		t.Errorf("no terminal: %q", out)
	}
}

func TestUnknownLanguageIsPlainCode(t *testing.T) {
	out := RenderWith("```klingon\nfunc x\n```", Options{Width: 40, Profile: colorprofile.TrueColor})
	if want := "    \x1b[0;" + darkPalette.rule + "mklingon\x1b[0m\n    \x1b[0;" + darkPalette.codeBlock + "mfunc x\x1b[0m"; !strings.Contains(out, want) {
		t.Errorf("got %q, want %q", out, want)
	}
	if out := RenderWith("```\nfunc x\n```", Options{Width: 40, Profile: colorprofile.TrueColor}); out != "    \x1b[0;"+darkPalette.codeBlock+"mfunc x\x1b[0m" {
		t.Errorf("no info: %q", out)
	}
}

// A block rendered chunk by chunk, previews of the lines still arriving
// in between, gives the lines of the whole block: one label, the colours
// of a raw string and a comment that span chunks.
func TestCodeChunksRenderAsTheWholeBlock(t *testing.T) {
	head := "  ```go"
	body := []string{"  package main", "  /* a comment", "  over lines */", "  var s = `raw", "", "  string`", "  func main() {", "  \tprintln(s)", "  }"}
	o := Options{Width: 50, Profile: colorprofile.ANSI256}
	whole := strings.Split(RenderWith(head+"\n"+strings.Join(body, "\n")+"\n  ```", o), "\n")
	for n := 1; n <= 4; n++ {
		c := NewCodeChunks(o)
		var got []string
		for i := 0; i < len(body); i += n {
			chunk := head + "\n" + strings.Join(body[i:min(i+n, len(body))], "\n")
			c.Render(head+"\n"+strings.Join(body[i:], "\n"), false) // a preview changes nothing
			got = append(got, c.Render(chunk, true)...)
		}
		if strings.Join(got, "\n") != strings.Join(whole, "\n") {
			t.Errorf("chunks of %d:\n got %q\nwant %q", n, got, whole)
		}
	}
}
