package termmd

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

const sample = "# Title\n\nSome **bold and _nested italic_ text** with `code` and a [link](https://x.y/z) that wraps, " +
	"plus averyveryveryverylongwordthatmustbebrokenbecauseitiswiderthanthescreen.\n\n" +
	"- one\n- two\n  - nested item with more words to wrap around\n\n1. first\n2. second\n\n> quoted text\n\n" +
	"```go\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n```\n\n| a | bee | c |\n|---|:---:|--:|\n| 1 | two | three |\n| 四 | 五六 | 七八九 |\n\n---\n\n- [x] done\n- [ ] todo\n"

func plain(s string) string { return ansi.Strip(s) }

func TestRenderElements(t *testing.T) {
	got := plain(Render(sample, 44, false))
	want := `  # Title

  Some bold and nested italic text with
  code and a link (https://x.y/z) that
  wraps, plus
  averyveryveryverylongwordthatmustbebroke
  nbecauseitiswiderthanthescreen.

  • one
  • two
    • nested item with more words to wrap
      around

  1. first
  2. second

  │ quoted text

    Go
    func main() {
        fmt.Println("hello")
    }

  a  │ bee  │      c
  ───┼──────┼───────
  1  │ two  │  three
  四 │ 五六 │ 七八九

  ────────────────────────────────────────

  • [x] done
  • [ ] todo`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// tokens are the words of s without Markdown punctuation, for checking
// that a rendering lost nothing.
func tokens(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// Whatever the width, every line fits and every word of the source is
// there, in order (a word may be broken across lines).
func TestRenderFitsAndKeepsEveryWord(t *testing.T) {
	var long strings.Builder
	for i := range 150 {
		fmt.Fprintf(&long, "word%03d and some filler text that runs on ", i)
	}
	table := "| name | description | value |\n|---|---|---|\n"
	for i := range 20 {
		table += fmt.Sprintf("| row%02d | a description that is quite long for a narrow screen %02d | %d |\n", i, i, i*1000)
	}
	code := "```\n" + strings.Repeat("x", 300) + "\n" + strings.Repeat("一二三", 50) + "\n```\n"
	cjk := strings.Repeat("漢字とかなの混ざった文章です。", 30)
	for name, src := range map[string]string{"sample": sample, "paragraph": long.String(), "table": table, "code": code, "cjk": cjk} {
		for _, width := range []int{20, 40, 79, 120} {
			out := Render(src, width, width%2 == 0)
			for _, l := range strings.Split(out, "\n") {
				if w := ansi.StringWidth(l); w > width {
					t.Errorf("%s at %d: a line of %d cells: %q", name, width, w, plain(l))
				}
			}
			if name == "table" && width < 79 {
				continue // wrapped cells interleave on the lines
			}
			flat := strings.Join(tokens(plain(out)), "")
			at := 0
			for _, tok := range tokens(src) {
				if tok == "go" || tok == "x" && name == "sample" {
					continue
				}
				i := strings.Index(flat[at:], tok)
				if i < 0 {
					t.Fatalf("%s at %d: %q is missing or out of order", name, width, tok)
				}
				at += i + len(tok)
			}
		}
	}
}

var sgrOrText = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// Every line carries its own style: a bold sentence wrapped over several
// lines is bold on each, and each line ends in a reset.
func TestRenderStyleCarriesAcrossLines(t *testing.T) {
	out := Render("**"+strings.TrimSpace(strings.Repeat("bold words ", 20))+"**", 30, false)
	lines := strings.Split(out, "\n")
	if len(lines) < 3 {
		t.Fatalf("%d lines", len(lines))
	}
	for _, l := range lines {
		body := strings.TrimLeft(l, " ")
		if !strings.HasPrefix(body, "\x1b[0;1m") || !strings.HasSuffix(body, "\x1b[0m") {
			t.Errorf("line %q does not carry its style", l)
		}
	}
}

// Text from the model cannot move the cursor or clear the screen: the
// only escapes left are colours.
func TestRenderDropsControlSequences(t *testing.T) {
	out := Render("hello \x1b[2J\x1b[H world\r\n\n```\nclear\x1b[2J\n```\n", 40, false)
	rest := sgrOrText.ReplaceAllString(out, "")
	if strings.ContainsFunc(rest, func(r rune) bool { return r < 0x20 && r != '\n' }) {
		t.Errorf("control characters left: %q", rest)
	}
}

// FuzzRender: no input makes Render panic, take long, leave control
// characters, or (when the width leaves room for the narrowest column)
// write a line wider than asked.
func FuzzRender(f *testing.F) {
	f.Add(sample, 40)
	f.Add("| a |\n|---|\n| b |", 10)
	f.Add("> > > - 1. ```\nx\n```", 12)
	f.Add("- a\n  - b\n\n    ```\n    code\n    ```\n- [x] c *d* **e** ~~f~~ `g` [h](i) <j> www.k.l\n", 20)
	f.Add("| a | b | c | d | e | f | g |\n|---|---|---|---|---|---|---|\n| 漢字 | 😀 | x | y | z | w | v |\n", 14)
	f.Add("[a]: /u\n\n[a] *b _c_ d* &amp; &#x41; \\* <b>x</b> 2*3*4 snake_case_word", 30)
	f.Fuzz(func(t *testing.T, src string, width int) {
		if width < 0 || width > 400 || !utf8.ValidString(src) {
			return
		}
		start := time.Now()
		out := Render(src, width, false)
		if d := time.Since(start); d > 2*time.Second+time.Duration(len(src))*time.Millisecond {
			t.Errorf("rendering %d bytes took %v", len(src), d)
		}
		rest := sgrOrText.ReplaceAllString(out, "")
		if strings.ContainsFunc(rest, func(r rune) bool { return r < 0x20 && r != '\n' || r == 0x7f }) {
			t.Errorf("control characters left: %q", rest)
		}
		if width < minWidth+2*margin {
			return
		}
		for _, l := range strings.Split(out, "\n") {
			if w := ansi.StringWidth(l); w > width {
				t.Errorf("a line of %d cells at width %d: %q", w, width, l)
			}
		}
	})
}
