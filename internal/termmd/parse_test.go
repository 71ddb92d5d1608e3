package termmd

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

var sgrSet = regexp.MustCompile(`\x1b\[0;([0-9;]*)m`)

// styles shows the styling of rendered text in a readable form: every
// SGR sequence becomes "<params>" (without the leading reset; the
// palette's colours by name), the reset alone "</>".
func styles(s string) string {
	names := strings.NewReplacer(darkPalette.heading, "head", darkPalette.code, "code",
		darkPalette.codeBlock, "block", darkPalette.link, "link", darkPalette.quote, "quote", darkPalette.rule, "rule")
	s = sgrSet.ReplaceAllStringFunc(s, func(seq string) string {
		return "<" + names.Replace(sgrSet.FindStringSubmatch(seq)[1]) + ">"
	})
	return strings.ReplaceAll(s, "\x1b[0m", "</>")
}

type renderCase struct {
	name, src, want string
}

// runCases renders each source at width 40 (36 columns of text) and
// compares the text without styles, the margin stripped.
func runCases(t *testing.T, cases []renderCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := unindent(plain(Render(c.src, 40, false)))
			if got != c.want {
				t.Errorf("source %q\ngot:\n%s\nwant:\n%s", c.src, got, c.want)
			}
		})
	}
}

// unindent strips the two-cell margin and trailing spaces.
func unindent(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(strings.TrimPrefix(l, "  "), " ")
	}
	return strings.Join(lines, "\n")
}

func TestHeadings(t *testing.T) {
	runCases(t, []renderCase{
		{"atx", "# One\n## Two ##\n###### Six", "# One\n\n## Two\n\n###### Six"},
		{"atx needs a space", "#hashtag and ####### seven", "#hashtag and ####### seven"},
		{"atx closing run needs a space", "# C# #", "# C#"},
		{"atx inline markup", "# a *b* `c`", "# a b c"},
		{"empty atx", "#", "#"},
		{"setext", "Title\n=====\n\nSub\n---", "# Title\n\n## Sub"},
		{"setext of two lines", "one\ntwo\n===", "# one two"},
		{"setext needs a paragraph", "===\n", "==="},
		{"dashes after a list are a rule", "- a\n---", "• a\n\n" + strings.Repeat("─", 36)},
		{"heading interrupts a paragraph", "text\n# head", "text\n\n# head"},
	})
}

func TestParagraphsAndBreaks(t *testing.T) {
	runCases(t, []renderCase{
		{"soft break", "one\ntwo", "one two"},
		{"hard break by spaces", "one  \ntwo", "one\ntwo"},
		{"hard break by backslash", "one\\\ntwo", "one\ntwo"},
		{"trailing spaces go", "one   ", "one"},
		{"leading spaces go", "   one\n     two", "one two"},
		{"paragraphs", "one\n\n\n\ntwo", "one\n\ntwo"},
		{"thematic breaks", "***\n- - -\n___", strings.Repeat("─", 36) + "\n\n" + strings.Repeat("─", 36) + "\n\n" + strings.Repeat("─", 36)},
		{"two dashes underline", "**\n--", "## **"},
		{"two stars are text", "a\n**", "a **"},
	})
}

func TestCodeBlocks(t *testing.T) {
	runCases(t, []renderCase{
		{"backticks with info", "```go\nfunc f() {\n\treturn\n}\n```", "  Go\n  func f() {\n      return\n  }"},
		{"an unknown language is labelled and plain", "```nosuchlang x=1\nx\n```", "  nosuchlang\n  x"},
		{"tildes", "~~~\n*not emphasis*\n~~~", "  *not emphasis*"},
		{"unclosed fence runs to the end", "```\na\n\n# not a heading", "  a\n\n  # not a heading"},
		{"shorter fence does not close", "````\n```\nstill code\n````\nafter", "  ```\n  still code\n\nafter"},
		{"other fence character does not close", "```\n~~~\n```", "  ~~~"},
		{"backtick in info string is inline code", "``` a`b\nc", "``` a`b c"},
		{"fence indentation is removed", "  ```\n  a\n    b\n ```", "  a\n    b"},
		{"blank lines inside", "```\na\n\n\nb\n```", "  a\n\n\n  b"},
		{"empty", "```\n```", ""},
		{"indented", "    code\n\n    more\n\ntext", "  code\n\n  more\n\ntext"},
		{"indented cannot interrupt a paragraph", "text\n    more", "text more"},
		{"tab indented", "\tcode", "  code"},
	})
}

func TestBlockQuotes(t *testing.T) {
	runCases(t, []renderCase{
		{"simple", "> quoted", "│ quoted"},
		{"lazy continuation", "> one\ntwo", "│ one two"},
		{"nested", "> a\n> > b\n> c", "│ a\n│\n│ │ b c"},
		{"blank line ends it", "> a\n\nb", "│ a\n\nb"},
		{"two paragraphs", "> a\n>\n> b", "│ a\n│\n│ b"},
		{"quote holds a list and code", "> - x\n>\n>   ```\n>   y\n>   ```", "│ • x\n│\n│     y"},
		{"no space after >", ">a", "│ a"},
	})
}

func TestLists(t *testing.T) {
	runCases(t, []renderCase{
		{"tight bullets", "- a\n- b\n* c", "• a\n• b\n\n• c"},
		{"loose", "- a\n\n- b", "• a\n\n• b"},
		{"ordered with start", "3. three\n4. four", "3. three\n4. four"},
		{"ordered widths align", "9. nine\n10. ten", "9.  nine\n10. ten"},
		{"paren delimiter", "1) a\n2) b", "1. a\n2. b"},
		{"nested by indentation", "- a\n  - b\n    - c\n- d", "• a\n  • b\n    • c\n• d"},
		{"too little indentation is a sibling", "- a\n - b", "• a\n• b"},
		{"lazy item continuation", "- a\nb", "• a b"},
		{"item with a code block", "- a\n\n  ```\n  code\n  ```\n- b", "• a\n\n    code\n\n• b"},
		{"item with indented code", "-     code\n  text", "•   code\n  text"},
		{"item with a quote", "- a\n  > q", "• a\n  │ q"},
		{"nested list inside a loose item", "1. a\n\n   - b\n   - c\n2. d", "1. a\n\n   • b\n   • c\n\n2. d"},
		{"blank line inside a nested list only", "- a\n  - b\n\n    c\n- d", "• a\n  • b\n\n    c\n• d"},
		{"ordered list can interrupt a paragraph only at 1", "text\n2. no\n1. yes", "text 2. no\n\n1. yes"},
		{"empty item cannot interrupt a paragraph", "text\n*\nmore", "text * more"},
		{"a dash under a paragraph is an underline", "text\n-\nmore", "## text\n\nmore"},
		{"empty items", "-\n- b\n-", "•\n• b\n•"},
		{"item starting with a blank line", "-\n  foo", "• foo"},
		{"tasks", "- [ ] todo\n- [x] done\n- [X] DONE\n- [y] not", "• [ ] todo\n• [x] done\n• [x] DONE\n• [y] not"},
		{"task marker needs a space", "- [x]done", "• [x]done"},
		{"ordered tasks", "1. [ ] a", "1. [ ] a"},
		{"nine digits at most", "1234567890. no", "1234567890. no"},
	})
}

func TestHTMLBlocks(t *testing.T) {
	runCases(t, []renderCase{
		{"div block as text", "<div>\n*not emphasis*\n</div>\n\nafter *yes*", "<div>\n*not emphasis*\n</div>\n\nafter yes"},
		{"comment", "<!-- a\n\nb -->\ntext", "<!-- a\n\nb -->\n\ntext"},
		{"kind 7 cannot interrupt a paragraph", "text\n<span>\nmore", "text <span> more"},
		{"kind 7 block", "<custom-tag>\n*x*", "<custom-tag>\n*x*"},
		{"pre keeps blank lines", "<pre>\na\n\nb\n</pre>", "<pre>\na\n\nb\n</pre>"},
	})
}

func TestTables(t *testing.T) {
	runCases(t, []renderCase{
		{"alignment", "| l | c | r |\n|:--|:-:|--:|\n| 1 | 2 | 3 |\n| long | long | long |",
			"l    │  c   │    r\n─────┼──────┼─────\n1    │  2   │    3\nlong │ long │ long"},
		{"no outer pipes", "a | b\n--|--\n1 | 2", "a │ b\n──┼──\n1 │ 2"},
		{"escaped pipes, in code too", "| a | b |\n|---|---|\n| `x \\| y` | p\\|q |", "a     │ b\n──────┼────\nx | y │ p|q"},
		{"inline markup in cells", "| *a* | **b** |\n|---|---|\n| [l](u) | ~~s~~ |", "a     │ b\n──────┼──\nl (u) │ s"},
		{"fewer and more cells", "| a | b |\n|---|---|\n| 1 |\n| 1 | 2 | 3 |", "a │ b\n──┼──\n1 │\n1 │ 2"},
		{"header and delimiter must agree", "| a | b |\n|---|\n| 1 | 2 |", "| a | b | |---| | 1 | 2 |"},
		{"table after paragraph lines", "intro\n| a |\n|---|\n| 1 |", "intro\n\na\n─\n1"},
		{"ends at a blank line", "| a |\n|---|\n| 1 |\n\ntext", "a\n─\n1\n\ntext"},
		{"ends at another block", "| a |\n|---|\n| 1 |\n> q", "a\n─\n1\n\n│ q"},
		{"row without pipes", "| a |\n|---|\nplain", "a\n─────\nplain"},
		{"wide characters", "| 名前 | 😀 |\n|---|---|\n| 漢字かな | x |", "名前     │ 😀\n─────────┼───\n漢字かな │ x"},
		{"in a list", "- | a |\n  |---|\n  | 1 |", "• a\n  ─\n  1"},
		{"under a list item without indentation", "1. Step\n| a | b |\n|---|---|\n| 1 | 2 |\n\nafter", "1. Step\n   a │ b\n   ──┼──\n   1 │ 2\n\nafter"},
		{"in a quote", "> | a |\n> |---|\n> | 1 |", "│ a\n│ ─\n│ 1"},
	})
}

func TestInlines(t *testing.T) {
	runCases(t, []renderCase{
		{"code spans", "`a` ``b ` c`` ` d ` `` e``", "a b ` c d  e"},
		{"unmatched backticks stay", "``a` b", "``a` b"},
		{"code span over a line end", "`a\nb`", "a b"},
		{"backslash escapes", `\*a\* \_b\_ \# \[c\] \\ \a`, `*a* _b_ # [c] \ \a`},
		{"entities", "&amp; &lt;&gt; &quot; &copy; &#65; &#x42; &#0; &nosuch; &", "& <> \" © A B \ufffd &nosuch; &"},
		{"no entities in code", "`&amp;`", "&amp;"},
		{"links", `[text](http://u "title") [same](same) [empty]()`, "text (http://u) same empty"},
		{"link destination in angle brackets", "[a](<b c>)", "a (b c)"},
		{"link with parentheses", "[a](f(x)) [b](g\\(y)", "a (f(x)) b (g(y)"},
		{"not a link", "[a] (b) [c]( d e )", "[a] (b) [c]( d e )"},
		{"reference links", "[full][ref] [Ref][] [ref]\n\n[ref]: /url 'title'", "full (/url) Ref (/url) ref (/url)"},
		{"undefined reference", "[a][nope] [b]", "[a][nope] [b]"},
		{"definition only", "[ref]: /url", ""},
		{"images", "![alt *text*](img.png) ![](x)", "Image: alt text (img.png) Image:\n(x)"},
		{"link inside image", "![a [b](c)](d)", "Image: a b (c) (d)"},
		{"no link inside a link", "[a [b](c)](d)", "[a b (c)](d)"},
		{"autolinks", "<https://x.y/z> <mailto:a@b.c> <a@b.co> <not a link>", "https://x.y/z mailto:a@b.c a@b.co\n<not a link>"},
		{"raw html stays text", "a <b>bold</b> <!-- c --> <span class=\"*x*\">", "a <b>bold</b> <!-- c --> <span\nclass=\"*x*\">"},
		{"bare urls", "see https://x.y/a_b_c, www.example.com. and (http://localhost:8080/p)", "see https://x.y/a_b_c,\nwww.example.com. and\n(http://localhost:8080/p)"},
		{"bare url in a link label", "[see https://a.b/c](https://a.b/c)", "see https://a.b/c (https://a.b/c)"},
		{"bare e-mail", "mail me@example.com.", "mail me@example.com."},
		{"strikethrough", "~~a~~ ~b~ ~~~c~~~ ~~d~", "a b ~~~c~~~ ~~d~"},
	})
}

// Styles of inlines: emphasis follows CommonMark's flanking rules, a
// '*' between letters or digits included (the spec's "5*6*78"); bare
// URLs and e-mail addresses are links, less trailing punctuation.
func TestInlineStyles(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"*a* _b_", "<3>a</> <3>b</>"},
		{"**a** __b__", "<1>a</> <1>b</>"},
		{"***a***", "<3;1>a</>"},
		{"*a **b** c*", "<3>a <3;1>b<3> c</>"},
		{"snake_case_words and __init__", "snake_case_words and <1>init</>"},
		{"2*3*4 and a*b*c", "2<3>3</>4 and a<3>b</>c"},
		{"2**3**4", "2<1>3</>4"},
		{"*foo bar *", "*foo bar *"},
		{"** a **", "** a **"},
		{"**foo*", "*<3>foo</>"},
		{"*foo**", "<3>foo</>*"},
		{"_foo_bar_", "<3>foo_bar</>"},
		{"*(a)*", "<3>(a)</>"},
		{"a * b * c", "a * b * c"},
		{"**a\nb**", "<1>a b</>"},
		{"*a `*` b*", "<3>a <3;code>*<3> b</>"},
		{"[*a*](u)", "<4;link;3>a</> <quote>(u)</>"},
		{"~~*a*~~", "<9;3>a</>"},
		{"\\*a*", "*a*"},
		{"see https://x.y/a_b, www.a.b.", "see <4;link>https://x.y/a_b</>, <4;link>www.a.b</>."},
		{"*https://a.b/c*", "<3;4;link>https://a.b/c</>"},
		{"(https://a.b/c_(d))", "(<4;link>https://a.b/c_(d)</>)"},
		{"https://a.b/?q=1&amp;x;", "<4;link>https://a.b/?q=1</>&x;"},
		{"x https://a.b/c&hl;", "x <4;link>https://a.b/c</>&hl;"},
		{"nohttps://a.b", "nohttps://a.b"},
		{"mail a.b-c@d.e.", "mail <4;link>a.b-c@d.e</>."},
		{"(me@x.yz) <you@x.yz> x:c@d.ef", "(<4;link>me@x.yz</>) <4;link>you@x.yz</> x:c@d.ef"},
		{"HTTPS://A.B/C and WWW.A.B", "<4;link>HTTPS://A.B/C</> and <4;link>WWW.A.B</>"},
		{"[https://a.b](https://a.b)", "<4;link>https://a.b</>"},
		{"[see https://a.b/c] and `https://a.b/d` and ``https://a.b/e`x``", "[see <4;link>https://a.b/c</>] and <code>https://a.b/d</> and <code>https://a.b/e`x</>"},
		{"code: x`https://a.b/c`y", "code: x<code>https://a.b/c</>y"},
		{"`https://a.b`", "<code>https://a.b</>"},
		{"# h *e*", "<1;head># h <1;head;3>e</>"},
		{"| *a* |\n|---|\n| b |", "<1;3>a</>\n<rule>─</>\nb"},
	} {
		got := styles(unindent(Render(c.src, 80, false)))
		if got != c.want {
			t.Errorf("%q: got %q, want %q", c.src, got, c.want)
		}
	}
}

// Long runs and deep nesting parse in about linear time: a 100 KB
// paragraph of any of these renders well within a second.
func TestRenderIsLinear(t *testing.T) {
	cases := map[string]string{
		"openers":          strings.Repeat("*a ", 20000),
		"closers":          strings.Repeat("a* ", 20000),
		"underscores":      strings.Repeat("_a_b ", 20000),
		"brackets":         strings.Repeat("[", 30000) + strings.Repeat("]", 30000),
		"links":            strings.Repeat("[a](b ", 20000),
		"images and links": strings.Repeat("![", 10000) + strings.Repeat("[a](b) ", 10000),
		"backticks":        strings.Repeat("`a``", 20000),
		"comments":         strings.Repeat("<!-- ", 20000),
		"tags":             strings.Repeat("<a b='", 20000),
		"titles":           strings.Repeat("[a](b \"", 20000),
		"autolinks":        strings.Repeat("<a:b", 20000),
		"email autolinks":  strings.Repeat("<a.b", 20000) + "@",
		"entities":         strings.Repeat("&#", 30000),
		"urls":             strings.Repeat("(http://a.b/", 10000),
		"url parens":       "http://a.b/" + strings.Repeat(")", 30000),
		"quotes":           strings.Repeat(">", 5000) + " a\n" + strings.Repeat("> ", 2000) + "b",
		"lists":            strings.Repeat("- ", 5000) + "a",
		"list items":       strings.Repeat("- a\n", 20000),
		"table rows":       "| a | b |\n|---|---|\n" + strings.Repeat("| `x` | *y* |\n", 10000),
		"references":       strings.Repeat("[a]", 20000) + "\n\n[a]: /u",
		"long word":        strings.Repeat("x", 100000),
	}
	for name, src := range cases {
		start := time.Now()
		out := Render(src, 80, false)
		// "brackets" took 0.6 s (goldmark walks an opener's content at
		// each ']'), 3-16 s under the race detector, until shallowLinks.
		if d := time.Since(start); d > raceSlowdown*3*time.Second {
			t.Errorf("%s: %v for %d bytes", name, d, len(src))
		}
		for _, l := range strings.Split(out, "\n") {
			if w := ansi.StringWidth(l); w > 80 {
				t.Errorf("%s: a line of %d cells", name, w)
				break
			}
		}
	}
}

// However deep the nesting and however many columns, lines fit.
func TestRenderFitsWhenNestedOrWide(t *testing.T) {
	deep := strings.Repeat("> ", 30) + "quoted text that wraps"
	lists := ""
	for i := range 20 {
		lists += strings.Repeat("  ", i) + "- item " + fmt.Sprint(i) + "\n"
	}
	ordered := "123456789. a long ordered item\n   - nested\n"
	wide := "|" + strings.Repeat(" col |", 12) + "\n|" + strings.Repeat("---|", 12) + "\n|" + strings.Repeat(" 漢字 |", 12) + "\n"
	longWords := "- " + strings.Repeat("long", 30) + " https://example.com/" + strings.Repeat("path/", 20) + "\n\n" +
		"> " + strings.Repeat("引用", 40) + "\n\n# " + strings.Repeat("Heading", 12)
	longCells := "| name | value |\n|---|---|\n| " + strings.Repeat("word", 25) + " | `" + strings.Repeat("x", 60) + "` |"
	for _, src := range []string{deep, lists, ordered, wide, longWords, longCells} {
		for _, width := range []int{12, 16, 24, 40} {
			out := Render(src, width, false)
			for _, l := range strings.Split(out, "\n") {
				if w := ansi.StringWidth(l); w > width {
					t.Errorf("width %d: a line of %d cells: %q", width, w, plain(l))
				}
			}
			if src == longCells {
				continue // wrapped cells interleave on the lines
			}
			// Nothing is lost.
			flat := strings.Join(tokens(plain(out)), "")
			for _, tok := range tokens(src) {
				if !strings.Contains(flat, tok) {
					t.Errorf("width %d: %q is missing from\n%s", width, tok, plain(out))
				}
			}
		}
	}
}

// A table too wide for the screen even with narrow columns is shown as
// records: each cell after its column's name.
func TestTableRecords(t *testing.T) {
	src := "| a | b | c | d | e |\n|---|---|---|---|---|\n| 1 | 2 | 3 | 4 | 5 |\n| 6 | 7 | 8 | 9 | 0 |"
	got := unindent(plain(Render(src, 20, false)))
	want := "a: 1\nb: 2\nc: 3\nd: 4\ne: 5\n\na: 6\nb: 7\nc: 8\nd: 9\ne: 0"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

// Line endings may be CRLF.
func TestCRLF(t *testing.T) {
	got := unindent(plain(Render("# a\r\n\r\n- b\r\n- c\r\n", 40, false)))
	if want := "# a\n\n• b\n• c"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
