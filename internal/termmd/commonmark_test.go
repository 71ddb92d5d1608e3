package termmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"golang.org/x/net/html"
)

// The CommonMark spec's examples, as goldmark ships them (_test/spec.json,
// spec 0.31.2), run through termmd's parser and through goldmark, each
// rendered to HTML and compared as the spec's own test runner compares
// (normalize.py: whitespace between block tags and runs of whitespace
// collapsed, attributes sorted, entities written one way), plus one rule
// of ours: link titles are dropped on both sides, because termmd does not
// keep them (a terminal does not show them). termmd renders to the
// terminal, so termmdHTML below writes its parse tree as the spec's
// reference renderer would; what it cannot show is what the parser got.
//
//	go test -run TestCommonMarkSpec -v ./internal/termmd
//
// docs/performance.md §14 and §29 have the figures.

type specExample struct {
	Markdown string `json:"markdown"`
	HTML     string `json:"html"`
	Example  int    `json:"example"`
	Section  string `json:"section"`
}

func specExamples(t *testing.T) []specExample {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not on PATH")
	}
	out, err := exec.Command(gobin, "list", "-m", "-f", "{{.Dir}}", "github.com/yuin/goldmark").Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		t.Skipf("goldmark is not in the module cache: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "_test", "spec.json"))
	if err != nil {
		t.Skipf("no spec examples: %v", err)
	}
	var examples []specExample
	if err := json.Unmarshal(data, &examples); err != nil {
		t.Fatal(err)
	}
	return examples
}

func TestCommonMarkSpec(t *testing.T) {
	examples := specExamples(t)
	// Raw HTML is written as it is, as goldmark's own spec test does.
	gm := goldmark.New(goldmark.WithRendererOptions(gmhtml.WithUnsafe()))
	gfm := goldmark.New(goldmark.WithRendererOptions(gmhtml.WithUnsafe()), goldmark.WithExtensions(extension.GFM))
	var passTermmd, passGoldmark, passGFM int
	failed := map[string][]int{}
	for _, ex := range examples {
		want := normalizeHTML(ex.HTML)
		if normalizeHTML(termmdHTML(ex.Markdown)) == want {
			passTermmd++
		} else {
			failed[ex.Section] = append(failed[ex.Section], ex.Example)
		}
		for _, c := range []struct {
			md   goldmark.Markdown
			pass *int
		}{{gm, &passGoldmark}, {gfm, &passGFM}} {
			var b bytes.Buffer
			if err := c.md.Convert([]byte(ex.Markdown), &b); err == nil && normalizeHTML(b.String()) == want {
				(*c.pass)++
			}
		}
	}
	n := len(examples)
	t.Logf("CommonMark spec examples passed: termmd %d/%d (%.1f%%), goldmark %d/%d (%.1f%%), goldmark+GFM %d/%d (%.1f%%)",
		passTermmd, n, pct(passTermmd, n), passGoldmark, n, pct(passGoldmark, n), passGFM, n, pct(passGFM, n))
	sections := make([]string, 0, len(failed))
	for s := range failed {
		sections = append(sections, s)
	}
	sort.Slice(sections, func(i, j int) bool { return len(failed[sections[i]]) > len(failed[sections[j]]) })
	for _, s := range sections {
		t.Logf("  termmd fails %2d in %s: %v", len(failed[s]), s, failed[s])
	}
	// termmd's parser is goldmark's with GitHub's extensions: it passes
	// at least as many as goldmark+GFM does.
	if passTermmd < passGFM {
		t.Errorf("termmd passes %d examples, fewer than goldmark+GFM's %d", passTermmd, passGFM)
	}
	if os.Getenv("TERMMD_SPEC_EXAMPLE") != "" {
		i, _ := strconv.Atoi(os.Getenv("TERMMD_SPEC_EXAMPLE"))
		ex := examples[i-1]
		t.Logf("example %d (%s):\n%q\ngot  %q\nwant %q", i, ex.Section, ex.Markdown, normalizeHTML(termmdHTML(ex.Markdown)), normalizeHTML(ex.HTML))
	}
}

func pct(a, n int) float64 { return 100 * float64(a) / float64(n) }

// termmdHTML writes termmd's parse tree as CommonMark's reference HTML
// renderer writes its own.
func termmdHTML(src string) string {
	var b strings.Builder
	writeHTML(&b, parse(src))
	return b.String()
}

func writeHTML(b *strings.Builder, n *node) {
	children := func() {
		for c := n.firstChild; c != nil; c = c.next {
			writeHTML(b, c)
		}
	}
	switch n.kind {
	case kindDocument:
		children()
	case kindParagraph:
		if n.firstChild == nil && n.literal == "" {
			return // link reference definitions only
		}
		if n.parent != nil && n.parent.kind == kindListItem && n.parent.parent.tight {
			children()
			b.WriteString("\n")
			return
		}
		b.WriteString("<p>")
		children()
		b.WriteString("</p>\n")
	case kindHeading:
		fmt.Fprintf(b, "<h%d>", n.level)
		children()
		fmt.Fprintf(b, "</h%d>\n", n.level)
	case kindThematicBreak:
		b.WriteString("<hr />\n")
	case kindCodeBlock:
		b.WriteString("<pre><code")
		if lang, _, _ := strings.Cut(strings.TrimSpace(n.info), " "); n.fenced && lang != "" {
			b.WriteString(` class="language-` + escapeHTML(lang) + `"`)
		}
		b.WriteString(">")
		if n.literal != "" {
			b.WriteString(escapeHTML(n.literal) + "\n")
		}
		b.WriteString("</code></pre>\n")
	case kindHTMLBlock:
		b.WriteString(n.literal + "\n")
	case kindBlockQuote:
		b.WriteString("<blockquote>\n")
		children()
		b.WriteString("</blockquote>\n")
	case kindList:
		tag := "ul"
		if n.ordered {
			tag = "ol"
		}
		b.WriteString("<" + tag)
		if n.ordered && n.start != 1 {
			fmt.Fprintf(b, ` start="%d"`, n.start)
		}
		b.WriteString(">\n")
		children()
		b.WriteString("</" + tag + ">\n")
	case kindListItem:
		b.WriteString("<li>")
		children()
		b.WriteString("</li>\n")
	case kindText:
		b.WriteString(escapeHTML(n.literal))
	case kindSoftBreak:
		b.WriteString("\n")
	case kindHardBreak:
		b.WriteString("<br />\n")
	case kindCodeSpan:
		b.WriteString("<code>" + escapeHTML(n.literal) + "</code>")
	case kindEmphasis:
		tag := "em"
		if n.level >= 2 {
			tag = "strong"
		}
		b.WriteString("<" + tag + ">")
		children()
		b.WriteString("</" + tag + ">")
	case kindStrikethrough:
		b.WriteString("<del>")
		children()
		b.WriteString("</del>")
	case kindLink, kindAutoLink:
		b.WriteString(`<a href="` + escapeHTML(normalizeURI(n.dest)) + `">`)
		if n.kind == kindAutoLink {
			b.WriteString(escapeHTML(n.literal))
		}
		children()
		b.WriteString("</a>")
	case kindImage:
		var alt strings.Builder
		plainText(&alt, n)
		b.WriteString(`<img src="` + escapeHTML(normalizeURI(n.dest)) + `" alt="` + escapeHTML(alt.String()) + `" />`)
	case kindRawHTML:
		b.WriteString(n.literal)
	case kindTaskMarker:
		b.WriteString(`<input disabled="" type="checkbox"`)
		if n.checked {
			b.WriteString(` checked=""`)
		}
		b.WriteString(" /> ")
	default: // tables: not in the spec
		children()
	}
}

func plainText(b *strings.Builder, n *node) {
	for c := n.firstChild; c != nil; c = c.next {
		switch c.kind {
		case kindText, kindCodeSpan, kindAutoLink, kindRawHTML:
			b.WriteString(c.literal)
		case kindSoftBreak, kindHardBreak:
			b.WriteString("\n")
		default:
			plainText(b, c)
		}
	}
}

func escapeHTML(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// normalizeURI percent-encodes what is not safe in a URL, keeping %XX
// escapes already there, as the reference renderer does.
func normalizeURI(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b.WriteString(s[i : i+3])
			i += 2
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(";/?:@&=+$,-_.!~*'()#", c) >= 0:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

var blockTags = map[string]bool{
	"article": true, "blockquote": true, "body": true, "center": true, "dd": true, "div": true, "dl": true, "dt": true,
	"fieldset": true, "figure": true, "footer": true, "form": true, "h1": true, "h2": true, "h3": true, "h4": true,
	"h5": true, "h6": true, "header": true, "hr": true, "html": true, "li": true, "menu": true, "nav": true, "ol": true,
	"p": true, "pre": true, "section": true, "table": true, "tbody": true, "td": true, "tfoot": true, "th": true,
	"thead": true, "tr": true, "ul": true,
}

// normalizeHTML is the spec runner's normalisation (normalize.py), and
// link titles dropped.
func normalizeHTML(s string) string {
	type tok struct {
		text  string
		block bool // a block-level tag
		data  bool // text outside <pre>
	}
	var toks []tok
	z := html.NewTokenizer(strings.NewReader(s))
	pre := 0
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		t := z.Token()
		switch tt {
		case html.TextToken:
			if pre > 0 {
				toks = append(toks, tok{text: escapeHTML(t.Data)})
			} else {
				toks = append(toks, tok{text: escapeHTML(collapseSpace(t.Data)), data: true})
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			if t.Data == "pre" {
				pre++
			}
			attrs := slices.DeleteFunc(t.Attr, func(a html.Attribute) bool { return a.Key == "title" })
			sort.Slice(attrs, func(i, j int) bool { return attrs[i].Key < attrs[j].Key })
			var b strings.Builder
			b.WriteString("<" + t.Data)
			for _, a := range attrs {
				b.WriteString(" " + a.Key + `="` + escapeHTML(a.Val) + `"`)
			}
			b.WriteString(">")
			toks = append(toks, tok{text: b.String(), block: blockTags[t.Data]})
		case html.EndTagToken:
			if t.Data == "pre" && pre > 0 {
				pre--
			}
			toks = append(toks, tok{text: "</" + t.Data + ">", block: blockTags[t.Data]})
		default:
			toks = append(toks, tok{text: t.String()})
		}
	}
	var b strings.Builder
	for i, t := range toks {
		text := t.text
		if t.data {
			if i == 0 || toks[i-1].block {
				text = strings.TrimLeft(text, " ")
			}
			if i == len(toks)-1 || toks[i+1].block {
				text = strings.TrimRight(text, " ")
			}
		}
		b.WriteString(text)
	}
	return b.String()
}

// collapseSpace turns every run of whitespace into one space.
func collapseSpace(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' {
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}
