package highlight

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/colorprofile"
)

// samples are the languages issue 20 asks for, each with a piece of
// code and a word in it that must be coloured as class.
var samples = []struct {
	info, code, word string
	class            *class
}{
	{"go", "package main\n\nfunc main() {\n\tfmt.Println(\"hi\") // greet\n}\n", "func", &keyword},
	{"golang", "var n = 42\n", "42", &number},
	{"python", "def greet(name):\n    return f\"hi {name}\"  # say it\n", "# say it", &comment},
	{"py", "import os\n", "import", &keyword},
	{"javascript", "const x = 'a';\nfunction f() { return x; }\n", "function", &keyword},
	{"js", "let y = 3;\n", "let", &keyword},
	{"typescript", "interface User { name: string }\n", "interface", &keyword},
	{"ts", "const n: number = 1;\n", "const", &keyword},
	{"tsx", "export default function App() {}\n", "export", &keyword},
	{"rust", "fn main() {\n    let s = \"x\";\n}\n", "\"x\"", &str},
	{"java", "public class A {\n  int n = 1;\n}\n", "public", &keyword},
	{"c", "#include <stdio.h>\nint main(void) { return 0; }\n", "return", &keyword},
	{"cpp", "std::vector<int> v;\nauto x = nullptr;\n", "nullptr", &keyword},
	{"c++", "template <typename T> T id(T x) { return x; }\n", "template", &keyword},
	{"bash", "if [ -f x ]; then\n  echo \"yes\"\nfi\n", "if", &keyword},
	{"sh", "echo hi # note\n", "# note", &comment},
	{"shell", "export A=1\n", "export", &typeName},
	{"json", "{\"a\": 1, \"b\": true}\n", "true", &number},
	{"yaml", "name: tiny\ncount: 3\n", "3", &number},
	{"toml", "[server]\nport = 8080\n", "8080", &number},
	{"sql", "SELECT id FROM users WHERE id = 1;\n", "SELECT", &keyword},
	{"html", "<div class=\"a\">hi</div>\n", "div", &tag},
	{"css", "p { color: red; }\n", "color", &keyword},
	{"markdown", "# Title\n\nsome `code` here\n", "# Title", &heading},
	{"md", "- item\n", "-", &keyword},
	{"diff", "--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new\n", "+new", &inserted},
	{"patch", "-gone\n", "-gone", &deleted},
}

func TestLanguagesColourTheirTokens(t *testing.T) {
	for _, profile := range []colorprofile.Profile{colorprofile.ANSI, colorprofile.ANSI256, colorprofile.TrueColor} {
		for _, light := range []bool{false, true} {
			for _, s := range samples {
				l := Lookup(s.info)
				if l == nil {
					t.Fatalf("Lookup(%q) = nil", s.info)
				}
				lines, _ := l.Lines(strings.TrimSuffix(s.code, "\n"), State{}, profile, light)
				want := "\x1b[" + s.class.sgr(profile, light) + "m" + s.word
				if !strings.Contains(strings.Join(lines, "\n"), want) {
					t.Errorf("%s (%v, light %v): %q not coloured as %q in\n%q", s.info, profile, light, s.word, want, lines)
				}
				if got := stripSGR(strings.Join(lines, "\n")); got != strings.TrimSuffix(s.code, "\n") {
					t.Errorf("%s: text changed:\n got %q\nwant %q", s.info, got, s.code)
				}
			}
		}
	}
}

var sgrRE = regexp.MustCompile("\x1b\\[([0-9;]*)m")

func stripSGR(s string) string { return sgrRE.ReplaceAllString(s, "") }

func TestSixteenColoursUseOnlySixteenColourCodes(t *testing.T) {
	for _, s := range samples {
		lines, _ := Lookup(s.info).Lines(strings.TrimSuffix(s.code, "\n"), State{}, colorprofile.ANSI, false)
		for _, m := range sgrRE.FindAllStringSubmatch(strings.Join(lines, "\n"), -1) {
			for p := range strings.SplitSeq(m[1], ";") {
				switch p {
				case "0", "1", "3", "30", "31", "32", "33", "34", "35", "36", "37", "90", "91", "92", "93", "94", "95", "96", "97":
				default:
					t.Errorf("%s: SGR %q is not among the 16 colours", s.info, m[0])
				}
			}
		}
	}
	lines, _ := Lookup("go").Lines("func f() {}", State{}, colorprofile.ANSI256, false)
	if !strings.Contains(lines[0], "38;5;") {
		t.Errorf("256 colours: %q", lines[0])
	}
	lines, _ = Lookup("go").Lines("func f() {}", State{}, colorprofile.TrueColor, false)
	if !strings.Contains(lines[0], "38;2;") {
		t.Errorf("true colour: %q", lines[0])
	}
}

func TestNoColourGivesThePlainLines(t *testing.T) {
	for _, profile := range []colorprofile.Profile{colorprofile.NoTTY, colorprofile.Ascii} {
		for _, s := range samples {
			lines, _ := Lookup(s.info).Lines(strings.TrimSuffix(s.code, "\n"), State{}, profile, false)
			if got := strings.Join(lines, "\n"); got != strings.TrimSuffix(s.code, "\n") {
				t.Errorf("%s (%v): %q", s.info, profile, got)
			}
		}
	}
}

func TestUnknownLanguages(t *testing.T) {
	for _, info := range []string{"", "  ", "nosuchlang", "*", "a/b", "[x]", "\\"} {
		if l := Lookup(info); l != nil {
			t.Errorf("Lookup(%q) = %s", info, l.Name())
		}
	}
	// Info strings carry more than the language; extensions and case work.
	for info, name := range map[string]string{"go title=main.go": "Go", "Python": "Python", ".rs": "Rust", "yml": "YAML", "c++": "C++", "console": "Bash"} {
		if l := Lookup(info); l == nil || l.Name() != name {
			t.Errorf("Lookup(%q) = %v, want %s", info, l, name)
		}
	}
}

// chunked highlights code in chunks of n lines, each going on from the
// state the one before ended in, as the UI does while a block streams.
func chunked(l *Language, code string, n int) []string {
	src := strings.Split(code, "\n")
	var out []string
	var st State
	for i := 0; i < len(src); i += n {
		var lines []string
		lines, st = l.Lines(strings.Join(src[i:min(i+n, len(src))], "\n"), st, colorprofile.ANSI256, false)
		out = append(out, lines...)
	}
	return out
}

func TestChunksAreColouredAsTheWholeBlock(t *testing.T) {
	cases := []struct{ info, code string }{
		{"go", "package main\n\n/* a comment\nover three\nlines */\nvar s = `raw\nstring\nhere`\nfunc main() {\n\tprintln(\"x\")\n}\n"},
		{"python", "def f():\n    \"\"\"A docstring\n    over lines\n    \"\"\"\n    return 1\n"},
		{"javascript", "const s = `template\nliteral ${x}\nend`;\n"},
		{"markdown", "# T\n\n```go\nfunc x() {}\n\n```\n<!-- a\ncomment -->\ntext *em*\n"},
		{"rust", "/* nested\n/* inner */\nstill */\nfn main() {}\n"},
		{"html", "<div>\n<!-- note\nmore -->\n<p class=\"x\">hi</p>\n</div>\n"},
	}
	for _, c := range cases {
		l := Lookup(c.info)
		whole, _ := l.Lines(strings.TrimSuffix(c.code, "\n"), State{}, colorprofile.ANSI256, false)
		for n := 1; n <= 4; n++ {
			got := chunked(l, strings.TrimSuffix(c.code, "\n"), n)
			if strings.Join(got, "\n") != strings.Join(whole, "\n") {
				t.Errorf("%s in chunks of %d:\n got %q\nwant %q", c.info, n, got, whole)
			}
		}
	}
}

// Chroma's C matches a block comment in one pattern, to the end of the
// text when it is not closed: the lines after a chunk that ends inside
// it are lexed again with the next chunk, so the comment's rest and what
// follows are coloured as in the whole block. (Chroma's JavaScript does
// not match an unclosed one at all: there only the code after the
// comment comes out right; docs/performance.md §17.)
func TestATokenSpanningChunksIsFoundOnceComplete(t *testing.T) {
	for _, info := range []string{"c", "javascript"} {
		l := Lookup(info)
		code := "/* one\n * two\n */\nint x = 1;"
		whole, _ := l.Lines(code, State{}, colorprofile.ANSI256, false)
		for n := 1; n <= 3; n++ {
			got := chunked(l, code, n)
			if got[3] != whole[3] || info == "c" && got[2] != whole[2] {
				t.Errorf("%s in chunks of %d:\n got %q\nwant %q", info, n, got, whole)
			}
		}
	}
	// Pending lines are bounded: an unclosed comment of many lines.
	var st State
	l := Lookup("c")
	for range 3 * maxPending {
		_, st = l.Lines("/* open", st, colorprofile.ANSI256, false)
		if len(st.pending) > maxPending {
			t.Fatalf("%d lines pending", len(st.pending))
		}
	}
}

func TestEveryLexerLoads(t *testing.T) {
	files, err := fs.ReadDir(lexerFiles, "lexers")
	if err != nil {
		t.Fatal(err)
	}
	reg := lexers()
	if got, want := len(reg.Lexers), len(files)+2; got != want {
		t.Errorf("%d lexers registered, want %d (every embedded file, Go, Markdown)", got, want)
	}
	for _, lx := range reg.Lexers {
		l := &Language{lexer: lx}
		if _, _, ok := l.tokens("x = 1 <a> \"s\" # c\n", ""); !ok {
			t.Errorf("%s does not run", l.Name())
		}
	}
}

// TestLexersMatchModule fails when the embedded definitions differ from
// those of the chroma version go.mod requires: run go generate.
func TestLexersMatchModule(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	out, err := exec.Command(gobin, "list", "-m", "-f", "{{.Dir}}", "github.com/alecthomas/chroma/v2").Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		t.Skipf("chroma is not in the module cache: %v", err)
	}
	files, err := os.ReadDir("lexers")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		from := filepath.Join(dir, "lexers", "embedded", f.Name())
		if f.Name() == "COPYING" {
			from = filepath.Join(dir, "COPYING")
		}
		want, err := os.ReadFile(from)
		if err != nil {
			t.Errorf("%s: %v (run go generate ./internal/highlight)", f.Name(), err)
			continue
		}
		got, _ := os.ReadFile(path.Join("lexers", f.Name()))
		if !bytes.Equal(got, want) {
			t.Errorf("lexers/%s differs from %s: run go generate ./internal/highlight", f.Name(), from)
		}
	}
}

// FuzzLines: any text, in any chunks, keeps its characters and lines;
// our own lexers (Go, Markdown) colour it in chunks as they do whole.
func FuzzLines(f *testing.F) {
	f.Add("go", "package main\n/* x\ny */ var s = `a\nb`\nfunc f() { return 'x' }", uint8(1))
	f.Add("markdown", "# T\n```go\nx\n```\n<!--\nc -->\n- [x] *a* **b** [l](u)", uint8(2))
	f.Add("python", "def f():\n  '''doc\n  '''\n  return 0x1f", uint8(1))
	f.Add("html", "<a href=x>\n<script>\nvar x\n</script>", uint8(3))
	f.Fuzz(func(t *testing.T, info, code string, n uint8) {
		l := Lookup(info)
		if l == nil || len(code) > 4096 || !utf8.ValidString(code) {
			return
		}
		chunk := int(n%5) + 1
		whole, _ := l.Lines(code, State{}, colorprofile.ANSI256, false)
		got := chunked(l, code, chunk)
		for _, lines := range [][]string{whole, got} {
			if stripSGR(strings.Join(lines, "\n")) != code && !strings.Contains(code, "\x1b") {
				t.Fatalf("text changed: %q", lines)
			}
			if len(lines) != strings.Count(code, "\n")+1 {
				t.Fatalf("%d lines for %d", len(lines), strings.Count(code, "\n")+1)
			}
		}
		if (l.Name() == "Go" || l.Name() == "Markdown") && strings.Join(got, "\n") != strings.Join(whole, "\n") {
			t.Fatalf("chunks of %d:\n got %q\nwant %q", chunk, got, whole)
		}
	})
}
