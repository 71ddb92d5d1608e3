// Package termmd renders Markdown (CommonMark with GitHub's tables,
// strikethrough, task lists and autolinks) as styled terminal lines that
// fit a width: nothing is cut, a word wider than the line is broken, a
// table too wide for the screen gets narrower columns whose cells wrap.
//
// It exists so that tiny-go starts fast: glamour links chroma, whose lexers
// and styles are parsed in package initialisation (tens of milliseconds on
// every start, even for --help). Code blocks are shown in one colour,
// without syntax highlighting.
package termmd

import (
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// margin is the left margin of a rendered document, as glamour's styles
// have it; the right edge keeps the same distance from the screen's edge.
const margin = 2

// minWidth is the narrowest text column rendered; below it lines may be
// wider than asked (nothing sensible fits).
const minWidth = 8

// Render returns src as terminal lines of at most width cells (when width
// leaves room for minWidth), joined by "\n", without leading or trailing
// blank lines. light picks colours for a light background.
func Render(src string, width int, light bool) string {
	r := renderer{src: []byte(src), pal: darkPalette}
	if light {
		r.pal = lightPalette
	}
	doc := goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser().Parse(text.NewReader(r.src))
	inner := max(width-2*margin, minWidth)
	lines := r.blocks(doc, inner)
	pad := strings.Repeat(" ", margin)
	for i, l := range lines {
		if l != "" {
			lines[i] = pad + l
		}
	}
	return strings.Join(trimBlank(lines), "\n")
}

// palette holds the SGR colour parameters of each element.
type palette struct {
	heading, code, codeBlock, link, quote, rule, bullet string
}

var darkPalette = palette{heading: "38;5;39", code: "38;5;203", codeBlock: "38;5;250", link: "38;5;30", quote: "38;5;244", rule: "38;5;240", bullet: "38;5;244"}

var lightPalette = palette{heading: "38;5;27", code: "38;5;160", codeBlock: "38;5;238", link: "38;5;30", quote: "38;5;242", rule: "38;5;250", bullet: "38;5;242"}

type renderer struct {
	src []byte
	pal palette
}

// blocks renders the block children of n, separated by blank lines (in
// the item of a tight list, by nothing).
func (r *renderer) blocks(n ast.Node, width int) []string {
	tight := false
	if n.Kind() == ast.KindListItem {
		if l, ok := n.Parent().(*ast.List); ok && l.IsTight {
			tight = true
		}
	}
	var out []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		lines := r.block(c, width)
		if len(lines) == 0 {
			continue
		}
		if len(out) > 0 && !tight {
			out = append(out, "")
		}
		out = append(out, lines...)
	}
	return out
}

func (r *renderer) block(n ast.Node, width int) []string {
	switch n := n.(type) {
	case *ast.Heading:
		// The level's marks lead the text, as the source has them.
		first := &ast.String{Value: []byte(strings.Repeat("#", n.Level) + " ")}
		n.InsertBefore(n, n.FirstChild(), first)
		return wrap(r.inline(n, "1", r.pal.heading), width)
	case *ast.Paragraph, *ast.TextBlock:
		return wrap(r.inline(n), width)
	case *ast.ThematicBreak:
		return []string{sgr(r.pal.rule, strings.Repeat("─", width))}
	case *ast.Blockquote:
		bar := sgr(r.pal.quote, "│") + " "
		lines := r.blocks(n, width-2)
		for i, l := range lines {
			lines[i] = bar + l
		}
		return lines
	case *ast.List:
		return r.list(n, width)
	case *ast.FencedCodeBlock, *ast.CodeBlock:
		return r.codeBlock(n, width)
	case *ast.HTMLBlock:
		var b strings.Builder
		r.rawLines(&b, n.Lines())
		if n.HasClosure() {
			b.Write(n.ClosureLine.Value(r.src))
		}
		return wrapVerbatim(strings.TrimRight(b.String(), "\n"), width, "")
	case *east.Table:
		return r.table(n, width)
	}
	// Anything else: its text, so no content is lost.
	if n.Type() == ast.TypeBlock && n.HasChildren() {
		return r.blocks(n, width)
	}
	return wrap(r.inline(n), width)
}

func (r *renderer) rawLines(b *strings.Builder, lines *text.Segments) {
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		b.Write(seg.Value(r.src))
	}
}

// codeBlock shows the code verbatim in one colour, indented by two cells;
// a line wider than the screen continues on the next line.
func (r *renderer) codeBlock(n ast.Node, width int) []string {
	var b strings.Builder
	r.rawLines(&b, n.Lines())
	code := strings.ReplaceAll(strings.TrimRight(b.String(), "\n"), "\t", "    ")
	if code == "" {
		return []string{""}
	}
	lines := wrapVerbatim(code, width-2, r.pal.codeBlock)
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return lines
}

// list renders the items with their markers; continuation lines and
// nested blocks are indented under the item's text.
func (r *renderer) list(n *ast.List, width int) []string {
	var out []string
	num := n.Start
	markerWidth := 2
	if n.IsOrdered() {
		markerWidth = len(strconv.Itoa(num+n.ChildCount()-1)) + 2
	}
	for item := n.FirstChild(); item != nil; item = item.NextSibling() {
		marker := sgr(r.pal.bullet, "•") + " "
		if n.IsOrdered() {
			m := strconv.Itoa(num) + "."
			marker = m + strings.Repeat(" ", markerWidth-len(m))
			num++
		}
		body := r.blocks(item, width-markerWidth)
		if len(body) == 0 {
			body = []string{""}
		}
		if !n.IsTight && len(out) > 0 {
			out = append(out, "")
		}
		indent := strings.Repeat(" ", markerWidth)
		for i, l := range body {
			switch {
			case i == 0:
				out = append(out, marker+l)
			case l == "":
				out = append(out, "")
			default:
				out = append(out, indent+l)
			}
		}
	}
	return out
}

// inline renders the inline children of n as one styled string in which
// every SGR sequence sets the whole state (so wrap can carry it across
// lines); hard line breaks are "\n".
func (r *renderer) inline(n ast.Node, style ...string) string {
	in := inliner{r: r, stack: style}
	in.children(n)
	in.set("")
	return in.b.String()
}

// inliner writes inline nodes with a stack of SGR parameters.
type inliner struct {
	r     *renderer
	b     strings.Builder
	stack []string
	state string // the SGR parameters in force in b
}

func (in *inliner) emit(s string) {
	if s == "" {
		return
	}
	in.set(strings.Join(in.stack, ";"))
	in.b.WriteString(s)
}

func (in *inliner) set(want string) {
	if want == in.state {
		return
	}
	if want == "" {
		in.b.WriteString("\x1b[0m")
	} else {
		in.b.WriteString("\x1b[0;" + want + "m")
	}
	in.state = want
}

func (in *inliner) styled(params string, fn func()) {
	in.stack = append(in.stack, params)
	fn()
	in.stack = in.stack[:len(in.stack)-1]
}

func (in *inliner) children(n ast.Node) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		in.node(c)
	}
}

func (in *inliner) node(n ast.Node) {
	src, pal := in.r.src, in.r.pal
	switch n := n.(type) {
	case *ast.Text:
		in.emit(clean(string(n.Segment.Value(src))))
		switch {
		case n.HardLineBreak():
			in.b.WriteString("\n")
		case n.SoftLineBreak():
			in.emit(" ")
		}
	case *ast.String:
		in.emit(clean(string(n.Value)))
	case *ast.CodeSpan:
		in.styled(pal.code, func() {
			for c := n.FirstChild(); c != nil; c = c.NextSibling() {
				if t, ok := c.(*ast.Text); ok {
					in.emit(clean(string(t.Segment.Value(src))))
				} else {
					in.node(c)
				}
			}
		})
	case *ast.Emphasis:
		params := "3"
		if n.Level >= 2 {
			params = "1"
		}
		in.styled(params, func() { in.children(n) })
	case *east.Strikethrough:
		in.styled("9", func() { in.children(n) })
	case *ast.Link:
		start := in.b.Len()
		in.styled("4;"+pal.link, func() { in.children(n) })
		label := ansi.Strip(in.b.String()[start:])
		if dest := string(n.Destination); dest != "" && dest != label {
			in.emit(" ")
			in.styled(pal.quote, func() { in.emit("(" + clean(dest) + ")") })
		}
	case *ast.AutoLink:
		in.styled("4;"+pal.link, func() { in.emit(clean(string(n.Label(src)))) })
	case *ast.Image:
		in.emit("Image: ")
		in.children(n)
		if dest := string(n.Destination); dest != "" {
			in.emit(" ")
			in.styled(pal.quote, func() { in.emit("(" + clean(dest) + ")") })
		}
	case *ast.RawHTML:
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			in.emit(clean(string(seg.Value(src))))
		}
	case *east.TaskCheckBox:
		if n.IsChecked {
			in.emit("[x] ")
		} else {
			in.emit("[ ] ")
		}
	default:
		in.children(n)
	}
}

// sgr colours a piece that stands alone (a rule, a marker, a code line).
func sgr(params, s string) string {
	if s == "" {
		return ""
	}
	return "\x1b[0;" + params + "m" + s + "\x1b[0m"
}

// clean drops what would move the cursor or change the terminal: control
// characters (a tab included: its width depends on the column) become
// spaces, so model text cannot draw.
func clean(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isControl(r) {
			return ' '
		}
		return r
	}, s)
}

func isControl(r rune) bool {
	return r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0
}

// trimBlank drops leading and trailing empty lines.
func trimBlank(lines []string) []string {
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}
