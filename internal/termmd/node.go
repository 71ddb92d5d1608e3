package termmd

import east "github.com/yuin/goldmark/extension/ast"

// nodeKind says what a node of the parsed document is.
type nodeKind uint8

const (
	// Blocks.
	kindDocument nodeKind = iota
	kindParagraph
	kindHeading
	kindThematicBreak
	kindCodeBlock
	kindHTMLBlock
	kindBlockQuote
	kindList
	kindListItem
	kindTable
	kindTableRow
	kindTableCell

	// Inlines.
	kindText
	kindSoftBreak
	kindHardBreak
	kindCodeSpan
	kindEmphasis
	kindStrikethrough
	kindLink
	kindImage
	kindAutoLink
	kindRawHTML
	kindTaskMarker
)

// node is one element of a parsed document: a block or an inline, as
// parse makes it from goldmark's tree.
type node struct {
	kind    nodeKind
	level   uint8 // heading: 1-6; emphasis: 1 (emphasis) or 2 (strong)
	checked bool  // task marker: [x]

	parent, firstChild, lastChild, next *node

	// literal is the text of a text, code span, autolink, raw HTML, code
	// block or HTML block node.
	literal string
	dest    string // link, image: destination

	// What only blocks have, nil for inlines: most nodes are inlines, and
	// keeping this out of them makes a node 96 bytes rather than 160.
	*blockState
}

// blockState holds a block's layout (lists, tables, code).
type blockState struct {
	ordered bool // lists
	start   int  // first number of an ordered list
	tight   bool // no blank line between items or their blocks

	aligns []east.Alignment // table: one per column, from the delimiter row
	header bool             // table row: the header row

	info   string // fenced code block: its info string ("go", "python title=x")
	fenced bool   // a fenced code block, not an indented one
}

func (n *node) appendChild(c *node) {
	c.parent = n
	if n.lastChild != nil {
		n.lastChild.next = c
	} else {
		n.firstChild = c
	}
	n.lastChild = c
}

// insertAfter puts c right after n, under n's parent.
func (n *node) insertAfter(c *node) {
	c.parent, c.next, n.next = n.parent, n.next, c
	if c.next == nil && n.parent != nil {
		n.parent.lastChild = c
	}
}
