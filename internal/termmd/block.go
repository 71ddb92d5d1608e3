package termmd

import (
	"strings"
)

// parse turns Markdown source into a document tree: the blocks first,
// line by line, then the inlines of every paragraph, heading and table
// cell (link reference definitions anywhere in the document apply to all
// of them).
func parse(src string) *node {
	p := blockParser{doc: &node{kind: kindDocument, blockState: &blockState{open: true}}}
	p.tip = p.doc
	for lineNo := 0; len(src) > 0; lineNo++ {
		line := src
		if i := strings.IndexByte(src, '\n'); i >= 0 {
			line, src = src[:i], src[i+1:]
		} else {
			src = ""
		}
		p.lineNo = lineNo
		p.addLine(strings.TrimSuffix(line, "\r"))
	}
	for p.tip != nil {
		p.finalize(p.tip)
	}
	parseAllInlines(p.doc, p.refs)
	return p.doc
}

// blockParser follows the parsing strategy of the CommonMark spec: a line
// first continues the open blocks it can (a quote's ">", an item's
// indentation), may then open new blocks, and what is left of it is text
// for the innermost block, or a lazy continuation of an open paragraph.
type blockParser struct {
	doc  *node
	tip  *node // the innermost open block
	refs map[string]string

	// The line being parsed and a cursor into it. Columns count tabs to
	// the next multiple of four; a tab can be partly consumed (a list
	// item's content may start in the middle of one).
	lineNo     int
	line       string
	offset     int
	column     int
	partialTab bool

	// What findNextNonspace saw from the cursor.
	nextNonspace       int
	nextNonspaceColumn int
	indent             int
	blank              bool

	// oldTip is the innermost open block before this line; lastMatched
	// the innermost one this line continued. allClosed says the blocks
	// between them have been closed.
	oldTip, lastMatched *node
	allClosed           bool
}

// A block's continuation test: whether the line continues it.
type continuation uint8

const (
	continued    continuation = iota
	notContinued              // the block ends before this line
	lineConsumed              // the line closed the block (a closing fence)
)

// A block start's result.
type started uint8

const (
	startedNothing   started = iota
	startedContainer         // a block that holds blocks: look for more
	startedLeaf              // a block that holds text: the rest of the line is its
)

// addLine parses one line (without its line end).
func (p *blockParser) addLine(line string) {
	p.line, p.offset, p.column, p.partialTab = line, 0, 0, false
	p.oldTip = p.tip

	// 1. Which open blocks does the line continue?
	container := p.doc
	for {
		last := container.lastChild
		if last == nil || !last.open {
			break
		}
		p.findNextNonspace()
		result := p.continues(last)
		if result == lineConsumed {
			p.markEnd(last)
			p.finalize(last)
			return
		}
		if result == notContinued {
			break
		}
		container = last
	}
	p.allClosed = container == p.oldTip
	p.lastMatched = container

	// 2. New blocks, unless the line belongs to a code or HTML block.
	leaf := container.kind == kindCodeBlock || container.kind == kindHTMLBlock
	for !leaf {
		p.findNextNonspace()
		if p.blank || p.indent < 4 && !maySpecial(p.line[p.nextNonspace]) {
			p.advanceNextNonspace()
			break
		}
		next, how := p.startBlock(container)
		if how == startedNothing {
			p.advanceNextNonspace()
			break
		}
		container = next
		leaf = how == startedLeaf
	}

	// 3. The rest of the line. A line that starts nothing and does not
	// continue the open containers lazily continues an open paragraph,
	// or (as goldmark, which this package replaced, has it) table: a
	// table written under a list item without its indentation stays
	// whole rather than spilling its rows into text.
	if !p.allClosed && !p.blank && (p.tip.kind == kindParagraph || p.tip.kind == kindTable) {
		switch {
		case p.tip.kind == kindTable:
			p.addTableRow(p.tip, p.rest())
		case !p.startTable(p.tip):
			p.tip.lines = append(p.tip.lines, p.rest())
		}
		p.markEnd(p.tip)
		return
	}
	p.closeUnmatched()
	switch container.kind {
	case kindCodeBlock:
		if container.fenceChar != 0 && container.startLine == p.lineNo {
			break // the opening fence
		}
		container.lines = append(container.lines, p.rest())
		if container.fenceChar != 0 || !p.blank {
			p.markEnd(container)
		}
	case kindHTMLBlock:
		rest := p.rest()
		container.lines = append(container.lines, rest)
		p.markEnd(container)
		if container.htmlEndMarker != "" && containsMarker(rest, container.htmlEndMarker, container.htmlEndNoCase) {
			p.finalize(container)
		}
	case kindParagraph:
		if !p.startTable(container) {
			container.lines = append(container.lines, p.rest())
		}
		p.markEnd(p.tip)
	case kindTable:
		p.addTableRow(container, p.rest())
		p.markEnd(container)
	default:
		if p.offset < len(p.line) && !p.blank {
			para := p.addChild(kindParagraph)
			p.advanceNextNonspace()
			para.lines = append(para.lines, p.rest())
		}
	}
}

// maySpecial reports whether a line whose first non-space byte is c may
// start a block other than a paragraph.
func maySpecial(c byte) bool {
	switch c {
	case '#', '`', '~', '*', '+', '_', '=', '<', '>', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return true
	}
	return false
}

// findNextNonspace looks past the spaces and tabs at the cursor.
func (p *blockParser) findNextNonspace() {
	i, col := p.offset, p.column
	for ; i < len(p.line); i++ {
		if c := p.line[i]; c == ' ' {
			col++
		} else if c == '\t' {
			col += 4 - col%4
		} else {
			break
		}
	}
	p.blank = i == len(p.line)
	p.nextNonspace, p.nextNonspaceColumn = i, col
	p.indent = col - p.column
}

func (p *blockParser) advanceNextNonspace() {
	p.offset, p.column, p.partialTab = p.nextNonspace, p.nextNonspaceColumn, false
}

// advanceColumns moves the cursor count columns over whitespace (a tab
// may be consumed in part) or, at other bytes, count bytes.
func (p *blockParser) advanceColumns(count int) {
	for count > 0 && p.offset < len(p.line) {
		if p.line[p.offset] == '\t' {
			toTabStop := 4 - p.column%4
			if toTabStop > count {
				p.partialTab = true
				p.column += count
				return
			}
			p.partialTab = false
			p.column += toTabStop
			p.offset++
			count -= toTabStop
			continue
		}
		p.partialTab = false
		p.offset++
		p.column++
		count--
	}
}

// rest is the line from the cursor; what is left of a partly consumed
// tab becomes spaces.
func (p *blockParser) rest() string {
	if p.partialTab {
		return strings.Repeat(" ", 4-p.column%4) + p.line[p.offset+1:]
	}
	return p.line[p.offset:]
}

func (p *blockParser) peek(i int) byte {
	if i < len(p.line) {
		return p.line[i]
	}
	return 0
}

// markEnd records that the line belongs to b and its ancestors (list
// tightness looks at the blank lines between blocks). The ancestors of a
// block already marked for this line are marked too, so the walk stops
// there: deep nesting stays linear.
func (p *blockParser) markEnd(b *node) {
	for ; b != nil && b.endLine != p.lineNo; b = b.parent {
		b.endLine = p.lineNo
	}
}

// continues reports whether the line continues the open block b, moving
// the cursor past b's markers (a quote's ">", an item's indentation).
func (p *blockParser) continues(b *node) continuation {
	switch b.kind {
	case kindBlockQuote:
		if p.indent < 4 && p.peek(p.nextNonspace) == '>' {
			p.advanceNextNonspace()
			p.advanceColumns(1)
			if c := p.peek(p.offset); c == ' ' || c == '\t' {
				p.advanceColumns(1)
			}
			p.markEnd(b)
			return continued
		}
		return notContinued
	case kindListItem:
		if p.blank {
			if b.firstChild == nil {
				return notContinued // an item starts with at most one blank line
			}
			p.advanceNextNonspace()
			return continued
		}
		if p.indent >= b.markerIndent+b.contentIndent {
			p.advanceColumns(b.markerIndent + b.contentIndent)
			return continued
		}
		return notContinued
	case kindList, kindDocument:
		return continued
	case kindCodeBlock:
		if b.fenceChar == 0 {
			switch {
			case p.indent >= 4:
				p.advanceColumns(4)
			case p.blank:
				p.advanceNextNonspace()
			default:
				return notContinued
			}
			return continued
		}
		if p.indent < 4 && p.isClosingFence(b) {
			return lineConsumed
		}
		for i := b.fenceIndent; i > 0; i-- {
			if c := p.peek(p.offset); c != ' ' && c != '\t' {
				break
			}
			p.advanceColumns(1)
		}
		return continued
	case kindHTMLBlock:
		if p.blank && b.htmlEndsBlank {
			return notContinued
		}
		return continued
	case kindParagraph, kindTable:
		if p.blank {
			return notContinued
		}
		return continued
	}
	return notContinued // headings and rules are one line
}

func (p *blockParser) isClosingFence(b *node) bool {
	s := p.line[p.nextNonspace:]
	n := 0
	for n < len(s) && s[n] == b.fenceChar {
		n++
	}
	return n >= b.fenceLen && strings.Trim(s[n:], " \t") == ""
}

// closeUnmatched closes the blocks the line did not continue, once it is
// clear the line is not a lazy paragraph continuation.
func (p *blockParser) closeUnmatched() {
	if p.allClosed {
		return
	}
	for p.oldTip != p.lastMatched {
		parent := p.oldTip.parent
		p.finalize(p.oldTip)
		p.oldTip = parent
	}
	p.allClosed = true
}

// addChild opens a block of kind under the innermost open block that can
// hold it, closing those that cannot.
func (p *blockParser) addChild(kind nodeKind) *node {
	for !canContain(p.tip.kind, kind) {
		p.finalize(p.tip)
	}
	n := &node{kind: kind, blockState: &blockState{open: true, startLine: p.lineNo}}
	p.tip.appendChild(n)
	p.markEnd(n)
	p.tip = n
	return n
}

func canContain(parent, child nodeKind) bool {
	switch parent {
	case kindDocument, kindBlockQuote, kindListItem:
		return child != kindListItem
	case kindList:
		return child == kindListItem
	}
	return false
}

// startBlock tries the block starts in the spec's order of precedence.
func (p *blockParser) startBlock(container *node) (*node, started) {
	indented := p.indent >= 4
	c := p.peek(p.nextNonspace)
	if !indented {
		switch c {
		case '>':
			p.advanceNextNonspace()
			p.advanceColumns(1)
			if c := p.peek(p.offset); c == ' ' || c == '\t' {
				p.advanceColumns(1)
			}
			p.closeUnmatched()
			return p.addChild(kindBlockQuote), startedContainer
		case '#':
			if n := p.atxHeading(); n != nil {
				return n, startedLeaf
			}
		case '`', '~':
			if n := p.fencedCode(); n != nil {
				return n, startedLeaf
			}
		case '<':
			if n := p.htmlBlock(container); n != nil {
				return n, startedLeaf
			}
		}
		if container.kind == kindParagraph && (c == '=' || c == '-') {
			if n := p.setextHeading(container); n != nil {
				return n, startedLeaf
			}
		}
		if isThematicBreak(p.line[p.nextNonspace:]) {
			p.closeUnmatched()
			n := p.addChild(kindThematicBreak)
			p.offset = len(p.line)
			return n, startedLeaf
		}
	}
	if n := p.listItem(container); n != nil {
		return n, startedContainer
	}
	if indented && !p.blank && p.tip.kind != kindParagraph && p.tip.kind != kindTable {
		p.advanceColumns(4)
		p.closeUnmatched()
		return p.addChild(kindCodeBlock), startedLeaf
	}
	return nil, startedNothing
}

func (p *blockParser) atxHeading() *node {
	s := p.line[p.nextNonspace:]
	level := 0
	for level < len(s) && s[level] == '#' {
		level++
	}
	if level > 6 || level < len(s) && s[level] != ' ' && s[level] != '\t' {
		return nil
	}
	p.closeUnmatched()
	n := p.addChild(kindHeading)
	n.level = uint8(level)
	n.literal = atxContent(s[level:])
	p.offset = len(p.line)
	return n
}

// atxContent strips a heading's spaces and its optional closing run of
// '#' (which must follow a space, or be all there is).
func atxContent(s string) string {
	s = strings.Trim(s, " \t")
	trimmed := strings.TrimRight(s, "#")
	if trimmed == "" {
		return ""
	}
	if len(trimmed) < len(s) {
		if last := trimmed[len(trimmed)-1]; last == ' ' || last == '\t' {
			s = strings.TrimRight(trimmed, " \t")
		}
	}
	return s
}

func (p *blockParser) fencedCode() *node {
	s := p.line[p.nextNonspace:]
	fence := s[0]
	n := 0
	for n < len(s) && s[n] == fence {
		n++
	}
	if n < 3 {
		return nil
	}
	info := strings.Trim(s[n:], " \t")
	if fence == '`' && strings.IndexByte(info, '`') >= 0 {
		return nil // it is inline code
	}
	p.closeUnmatched()
	b := p.addChild(kindCodeBlock)
	b.fenceChar, b.fenceLen, b.fenceIndent = fence, n, p.indent
	b.info = info
	p.offset = len(p.line)
	return b
}

func (p *blockParser) htmlBlock(container *node) *node {
	s := p.line[p.nextNonspace:]
	kind := htmlBlockKind(s)
	if kind == 0 {
		return nil
	}
	// The seventh kind (any complete tag) cannot interrupt a paragraph.
	lazy := !p.allClosed && p.tip.kind == kindParagraph
	if kind == 7 && (container.kind == kindParagraph || lazy) {
		return nil
	}
	p.closeUnmatched()
	b := p.addChild(kindHTMLBlock)
	b.htmlEndMarker, b.htmlEndNoCase = htmlBlockEnd(kind, s)
	b.htmlEndsBlank = kind >= 6
	return b
}

func (p *blockParser) setextHeading(para *node) *node {
	s := strings.TrimRight(p.line[p.nextNonspace:], " \t")
	if strings.Trim(s, s[:1]) != "" {
		return nil
	}
	para.lines = p.takeLinkDefinitions(para.lines)
	if len(para.lines) == 0 {
		return nil
	}
	p.closeUnmatched()
	para.kind = kindHeading
	para.level = 1
	if s[0] == '-' {
		para.level = 2
	}
	para.literal = strings.Trim(strings.Join(para.lines, "\n"), " \t\n")
	para.lines = nil
	p.markEnd(para)
	p.offset = len(p.line)
	return para
}

// isThematicBreak: three or more of the same '*', '-' or '_', with only
// spaces or tabs between and after them.
func isThematicBreak(s string) bool {
	if s == "" || s[0] != '*' && s[0] != '-' && s[0] != '_' {
		return false
	}
	marks := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case s[0]:
			marks++
		case ' ', '\t':
		default:
			return false
		}
	}
	return marks >= 3
}

// listItem starts an item (and a list, unless it continues the open
// list of the same marker).
func (p *blockParser) listItem(container *node) *node {
	if p.indent >= 4 {
		return nil
	}
	s := p.line[p.nextNonspace:]
	var marker byte
	start, markerLen := 0, 0
	switch {
	case s[0] == '-' || s[0] == '+' || s[0] == '*':
		marker, markerLen = s[0], 1
	case s[0] >= '0' && s[0] <= '9':
		for markerLen < len(s) && markerLen < 9 && s[markerLen] >= '0' && s[markerLen] <= '9' {
			start = start*10 + int(s[markerLen]-'0')
			markerLen++
		}
		if markerLen == len(s) || s[markerLen] != '.' && s[markerLen] != ')' {
			return nil
		}
		marker = s[markerLen]
		markerLen++
		if container.kind == kindParagraph && start != 1 {
			return nil // only "1." may interrupt a paragraph
		}
	default:
		return nil
	}
	if markerLen < len(s) && s[markerLen] != ' ' && s[markerLen] != '\t' {
		return nil
	}
	if container.kind == kindParagraph && strings.Trim(s[markerLen:], " \t") == "" {
		return nil // an empty item cannot interrupt a paragraph
	}

	markerIndent := p.indent
	p.advanceNextNonspace()
	p.offset += markerLen
	p.column += markerLen
	// The content starts after 1-4 spaces; after more (indented code in
	// the item) or none (an empty first line), one space counts.
	offset, column, partialTab := p.offset, p.column, p.partialTab
	for p.column-column < 5 {
		if c := p.peek(p.offset); c != ' ' && c != '\t' {
			break
		}
		p.advanceColumns(1)
	}
	spaces := p.column - column
	if spaces >= 5 || spaces < 1 || p.offset >= len(p.line) {
		p.offset, p.column, p.partialTab = offset, column, partialTab
		if c := p.peek(p.offset); c == ' ' || c == '\t' {
			p.advanceColumns(1)
		}
		spaces = 1
	}

	p.closeUnmatched()
	ordered := marker == '.' || marker == ')'
	if p.tip.kind != kindList || p.tip.listMarker != marker {
		list := p.addChild(kindList)
		list.listMarker, list.ordered, list.start = marker, ordered, start
	}
	item := p.addChild(kindListItem)
	item.markerIndent, item.contentIndent = markerIndent, markerLen+spaces
	return item
}

// finalize closes b and does what needs the whole block.
func (p *blockParser) finalize(b *node) {
	b.open = false
	p.tip = b.parent
	switch b.kind {
	case kindParagraph:
		b.lines = p.takeLinkDefinitions(b.lines)
		b.literal = strings.TrimRight(strings.Join(b.lines, "\n"), " \t\n")
		b.lines = nil
		// A paragraph of link definitions renders as nothing but stays:
		// the blank lines around it still make its list loose.
	case kindCodeBlock:
		if b.fenceChar == 0 {
			for len(b.lines) > 0 && strings.Trim(b.lines[len(b.lines)-1], " \t") == "" {
				b.lines = b.lines[:len(b.lines)-1]
			}
		}
		b.literal = strings.Join(b.lines, "\n")
		b.lines = nil
	case kindHTMLBlock:
		b.literal = strings.Join(b.lines, "\n")
		b.lines = nil
	case kindList:
		b.tight = isTight(b)
	}
}

// isTight: no blank line between the items of a list, nor between the
// blocks of an item.
func isTight(list *node) bool {
	for item := list.firstChild; item != nil; item = item.next {
		if item.next != nil && item.next.startLine > item.endLine+1 {
			return false
		}
		for c := item.firstChild; c != nil; c = c.next {
			if c.next != nil && c.next.startLine > c.endLine+1 {
				return false
			}
		}
	}
	return true
}
