package termmd

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

// alignment is the alignment of a table column, from its delimiter row.
type alignment uint8

const (
	alignNone alignment = iota
	alignLeft
	alignCenter
	alignRight
)

// node is one element of a parsed document: a block or an inline. It is a
// doubly linked tree because emphasis and links are found after their
// contents were parsed and must wrap a run of siblings in a new node.
type node struct {
	kind    nodeKind
	level   uint8 // heading: 1-6; emphasis: 1 (emphasis) or 2 (strong)
	checked bool  // task marker: [x]

	parent, firstChild, lastChild, prev, next *node

	// literal is the text of a text, code span, autolink, raw HTML, code
	// block or HTML block node; of a paragraph, heading or table cell it
	// is the source of its inlines until they are parsed.
	literal string
	dest    string // link, image: destination

	// What only blocks have, nil for inlines: most nodes are inlines, and
	// keeping this out of them makes a node 96 bytes rather than 160.
	*blockState
}

// blockState holds a block's layout (list, table) and the block
// parser's state (unused once the document is parsed).
type blockState struct {
	// Lists.
	ordered bool
	start   int  // first number of an ordered list
	tight   bool // no blank line between items or their blocks

	aligns []alignment // table: one per column
	header bool        // table row: the header row

	info string // fenced code block: its info string ("go", "python title=x")

	open          bool
	lines         []string // leaf block: content lines
	startLine     int      // the source line where the block started
	endLine       int      // the last source line that belongs to the block
	fenceChar     byte     // fenced code: '`' or '~'; 0 for indented code
	fenceLen      int      // fenced code: length of the opening fence
	fenceIndent   int      // fenced code: indentation of the opening fence
	listMarker    byte     // list: '-', '+', '*' or, ordered, '.' or ')'
	markerIndent  int      // list item: columns before the marker
	contentIndent int      // list item: columns from the marker to the content
	htmlEndsBlank bool     // HTML block: ends before a blank line (kinds 6, 7)
	htmlEndMarker string   // HTML block: ends at the line containing this (kinds 1-5)
	htmlEndNoCase bool     // htmlEndMarker is matched case-insensitively
}

func (n *node) appendChild(c *node) {
	c.parent = n
	c.prev = n.lastChild
	c.next = nil
	if n.lastChild != nil {
		n.lastChild.next = c
	} else {
		n.firstChild = c
	}
	n.lastChild = c
}

// insertAfter puts c right after n, under n's parent.
func (n *node) insertAfter(c *node) {
	c.parent = n.parent
	c.prev = n
	c.next = n.next
	if n.next != nil {
		n.next.prev = c
	} else if n.parent != nil {
		n.parent.lastChild = c
	}
	n.next = c
}

// unlink removes n from its parent.
func (n *node) unlink() {
	if n.prev != nil {
		n.prev.next = n.next
	} else if n.parent != nil {
		n.parent.firstChild = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	} else if n.parent != nil {
		n.parent.lastChild = n.prev
	}
	n.parent, n.prev, n.next = nil, nil, nil
}

func (n *node) childCount() int {
	count := 0
	for c := n.firstChild; c != nil; c = c.next {
		count++
	}
	return count
}
