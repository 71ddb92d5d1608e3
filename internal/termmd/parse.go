package termmd

import (
	"bufio"
	"bytes"
	"html"
	"strings"
	"sync"

	"github.com/yuin/goldmark"
	gast "github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	gmhtml "github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// markdown is goldmark with GitHub's extensions (tables, strikethrough,
// task lists; bare URLs are linkify.go's), built on first use so that a
// start that renders nothing pays nothing for it.
var markdown = sync.OnceValue(func() parser.Parser {
	inline := append(parser.DefaultInlineParsers(), util.Prioritized(intraword{}, 499))
	inline[1] = util.Prioritized(shallowLinks{parser.NewLinkParser()}, 200)
	p := parser.NewParser(parser.WithBlockParsers(parser.DefaultBlockParsers()...), parser.WithInlineParsers(inline...),
		parser.WithParagraphTransformers(parser.DefaultParagraphTransformers()...))
	return goldmark.New(goldmark.WithParser(p), goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.TaskList)).Parser()
})

// shallowLinks is goldmark's link parser with at most 64 open brackets a
// block: each ']' walks what its opener holds, so 30,000 nested brackets
// took seconds; deeper ones are text (no real link nests that deep).
type shallowLinks struct{ parser.InlineParser }

var openBrackets = parser.NewContextKey()

func (l shallowLinks) Parse(parent gast.Node, block text.Reader, pc parser.Context) gast.Node {
	line, _ := block.PeekLine()
	n, _ := pc.Get(openBrackets).(int)
	if line[0] == ']' {
		pc.Set(openBrackets, max(n-1, 0)) // goldmark's ']' drops the last opener
	} else if n >= 64 {
		return nil
	}
	node := l.InlineParser.Parse(parent, block, pc)
	if line[0] != ']' && node != nil {
		pc.Set(openBrackets, n+1)
	}
	return node
}

func (l shallowLinks) CloseBlock(parent gast.Node, block text.Reader, pc parser.Context) {
	pc.Set(openBrackets, 0)
	l.InlineParser.(parser.CloseBlocker).CloseBlock(parent, block, pc)
}

// intraword takes the runs of '_' between two ASCII letters or digits
// as text before goldmark's emphasis parser sees them. CommonMark says
// such a run can neither open nor close; keeping them off the delimiter
// stack matters because goldmark's processing of it is quadratic in the
// delimiters that match nothing (snake_case text).
type intraword struct{}

func (intraword) Trigger() []byte { return []byte{'_'} }

func (intraword) Parse(_ gast.Node, block text.Reader, _ parser.Context) gast.Node {
	before := block.PrecendingCharacter()
	line, seg := block.PeekLine()
	run := len(line) - len(bytes.TrimLeft(line, "_"))
	if before > 127 || !util.IsAlphaNumeric(byte(before)) || run >= len(line) || !util.IsAlphaNumeric(line[run]) {
		return nil
	}
	block.Advance(run)
	return gast.NewTextSegment(seg.WithStop(seg.Start + run))
}

// parse parses src with goldmark and returns it as the renderer's tree.
func parse(src string) *node {
	source := []byte(src)
	doc := markdown().Parse(text.NewReader(source))
	c := converter{source: source}
	root := &node{kind: kindDocument, blockState: &blockState{}}
	c.children(root, doc)
	c.flush()
	linkify(root)
	return root
}

// converter turns goldmark's tree into termmd's nodes.
type converter struct {
	source []byte
	// open is the text node being written, buf its text: goldmark
	// splits text at every delimiter it tried, and adding the pieces to
	// a string one by one would be quadratic.
	open *node
	buf  strings.Builder
}

// appendText appends s to parent's text, joining it to the text node
// parent ends with.
func (c *converter) appendText(parent *node, s string) {
	if c.open == nil || c.open != parent.lastChild {
		c.flush()
		c.open = &node{kind: kindText}
		parent.appendChild(c.open)
	}
	c.buf.WriteString(s)
}

func (c *converter) flush() {
	if c.open != nil {
		c.open.literal = c.buf.String()
		c.open = nil
		c.buf.Reset()
	}
}

func (c *converter) children(parent *node, n gast.Node) {
	for ch := n.FirstChild(); ch != nil; ch = ch.NextSibling() {
		c.node(parent, ch)
	}
}

// node appends the conversion of n to parent.
func (c *converter) node(parent *node, n gast.Node) {
	if c.block(parent, n) {
		return
	}
	var m *node
	switch n := n.(type) {
	case *gast.Text:
		c.text(parent, n)
		return
	case *gast.String:
		parent.appendChild(&node{kind: kindText, literal: c.decode(n.Value, n.IsRaw() || n.IsCode())})
		return
	case *gast.CodeSpan:
		parent.appendChild(&node{kind: kindCodeSpan, literal: c.codeSpan(n)})
		return
	case *gast.Emphasis:
		m = &node{kind: kindEmphasis, level: uint8(n.Level)}
	case *east.Strikethrough:
		if k := c.unevenTildes(n); k > 0 {
			// "~~d~": GitHub strikes through only between equal runs.
			c.appendText(parent, strings.Repeat("~", k))
			c.children(parent, n)
			c.appendText(parent, strings.Repeat("~", k))
			return
		}
		m = &node{kind: kindStrikethrough}
	case *gast.Link:
		m = &node{kind: kindLink, dest: c.decode(n.Destination, false)}
	case *gast.Image:
		m = &node{kind: kindImage, dest: c.decode(n.Destination, false)}
	case *gast.AutoLink:
		dest := string(n.URL(c.source))
		if n.AutoLinkType == gast.AutoLinkEmail && !strings.HasPrefix(strings.ToLower(dest), "mailto:") {
			dest = "mailto:" + dest
		}
		parent.appendChild(&node{kind: kindAutoLink, literal: string(n.Label(c.source)), dest: dest})
		return
	case *gast.RawHTML:
		parent.appendChild(&node{kind: kindRawHTML, literal: string(n.Segments.Value(c.source))})
		return
	case *east.TaskCheckBox:
		if next, ok := n.NextSibling().(*gast.Text); ok && next.Segment.Start >= 3 && c.source[next.Segment.Start-1] == ']' {
			// "[x]done": a task marker needs a space after it.
			c.appendText(parent, string(c.source[next.Segment.Start-3:next.Segment.Start]))
			return
		}
		parent.appendChild(&node{kind: kindTaskMarker, checked: n.IsChecked})
		return
	default:
		m = &node{kind: kindText} // an unknown inline: its text
	}
	parent.appendChild(m)
	c.children(m, n)
}

// block converts n when it is a block, reporting whether it was.
func (c *converter) block(parent *node, n gast.Node) bool {
	b := &node{blockState: &blockState{}}
	switch n := n.(type) {
	case *gast.Paragraph, *gast.TextBlock:
		b.kind = kindParagraph
	case *gast.Heading:
		b.kind, b.level = kindHeading, uint8(n.Level)
	case *gast.ThematicBreak:
		b.kind = kindThematicBreak
	case *gast.CodeBlock:
		b.kind, b.literal = kindCodeBlock, strings.TrimSuffix(string(n.Lines().Value(c.source)), "\n")
	case *gast.FencedCodeBlock:
		b.kind, b.literal, b.fenced = kindCodeBlock, strings.TrimSuffix(string(n.Lines().Value(c.source)), "\n"), true
		if n.Info != nil {
			b.info = c.decode(n.Info.Segment.Value(c.source), false)
		}
	case *gast.HTMLBlock:
		b.kind, b.literal = kindHTMLBlock, string(n.Lines().Value(c.source))
		if n.HasClosure() {
			b.literal += string(n.ClosureLine.Value(c.source))
		}
		b.literal = strings.TrimRight(b.literal, "\n")
	case *gast.Blockquote:
		b.kind = kindBlockQuote
	case *gast.List:
		b.kind, b.ordered, b.start, b.tight = kindList, n.IsOrdered(), n.Start, n.IsTight
	case *gast.ListItem:
		b.kind = kindListItem
	case *east.Table:
		b.kind = kindTable
		b.aligns = n.Alignments
	case *east.TableHeader:
		b.kind, b.header = kindTableRow, true
	case *east.TableRow:
		b.kind = kindTableRow
	case *east.TableCell:
		b.kind = kindTableCell
	default:
		return false
	}
	parent.appendChild(b)
	c.children(b, n)
	return true
}

// text appends a text and the line break that ends it, if any.
func (c *converter) text(parent *node, n *gast.Text) {
	if s := c.decode(n.Segment.Value(c.source), n.IsRaw()); s != "" {
		c.appendText(parent, s)
	}
	switch {
	case n.HardLineBreak():
		parent.appendChild(&node{kind: kindHardBreak})
	case n.SoftLineBreak():
		parent.appendChild(&node{kind: kindSoftBreak})
	}
}

// codeSpan is a code span's text: its line endings are spaces.
func (c *converter) codeSpan(n *gast.CodeSpan) string {
	var b strings.Builder
	for ch := n.FirstChild(); ch != nil; ch = ch.NextSibling() {
		switch t := ch.(type) {
		case *gast.Text:
			v := t.Segment.Value(c.source)
			b.Write(bytes.TrimSuffix(v, []byte("\n")))
			if bytes.HasSuffix(v, []byte("\n")) {
				b.WriteByte(' ')
			}
		case *gast.String:
			b.Write(t.Value)
		}
	}
	return b.String()
}

// unevenTildes is how many tildes goldmark took from each side of n when
// the runs of tildes around it differ in length, or 0.
func (c *converter) unevenTildes(n gast.Node) int {
	first, ok1 := n.FirstChild().(*gast.Text)
	last, ok2 := n.LastChild().(*gast.Text)
	if !ok1 || !ok2 {
		return 0
	}
	head, tail := c.source[:first.Segment.Start], c.source[last.Segment.Stop:]
	before, after := len(head)-len(bytes.TrimRight(head, "~")), len(tail)-len(bytes.TrimLeft(tail, "~"))
	if before == after {
		return 0
	}
	return min(before, after)
}

// decode resolves backslash escapes and character references as
// goldmark's HTML writer does, without its HTML escaping.
func (c *converter) decode(v []byte, raw bool) string {
	if raw || !bytes.ContainsAny(v, `\&`) {
		return string(v)
	}
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	gmhtml.DefaultWriter.Write(w, v)
	_ = w.Flush()
	return html.UnescapeString(buf.String())
}
