package termmd

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// parseAllInlines parses the inlines of every paragraph, heading and
// table cell under n.
func parseAllInlines(n *node, refs map[string]string) {
	for c := n.firstChild; c != nil; c = c.next {
		switch c.kind {
		case kindParagraph, kindHeading, kindTableCell:
			src := c.literal
			if c.kind == kindParagraph && c.parent.kind == kindListItem && c.prev == nil {
				src = taskMarker(c, src)
			}
			parseInlines(c, src, refs)
		default:
			parseAllInlines(c, refs)
		}
	}
}

// taskMarker turns a leading "[ ]" or "[x]" of a list item's first
// paragraph into a task marker (GitHub's task lists) and returns the rest.
func taskMarker(para *node, src string) string {
	if len(src) < 3 || src[0] != '[' || src[2] != ']' || len(src) > 3 && src[3] != ' ' && src[3] != '\t' && src[3] != '\n' {
		return src
	}
	switch src[1] {
	case ' ', 'x', 'X':
		para.appendChild(&node{kind: kindTaskMarker, checked: src[1] != ' '})
		return strings.TrimLeft(src[3:], " \t\n")
	}
	return src
}

// parseInlines parses src into the inline children of block. The
// algorithm is the CommonMark spec's: text, code spans, escapes,
// entities, autolinks and raw HTML are read left to right; runs of
// emphasis delimiters and link brackets are kept on stacks and matched
// when a closer comes (links at "]", emphasis at the end or when a link
// closes). Searches that could fail again and again (a closing backtick
// run, a quote, the end of an HTML comment) remember their failures, so
// the time stays linear in the length of src.
func parseInlines(block *node, src string, refs map[string]string) {
	p := inlineParser{block: block, src: src, refs: refs}
	for p.pos < len(p.src) {
		p.step()
	}
	p.processEmphasis(nil)
	mergeText(block)
	linkify(block)
}

type inlineParser struct {
	block *node
	src   string
	pos   int
	refs  map[string]string

	delimiters *delimiter // the top of the delimiter stack
	brackets   []bracket
	// inactiveBelow: the brackets below this index that open links are
	// inactive (a link cannot contain a link), so deactivating them again
	// does not walk the stack again.
	inactiveBelow int

	// backtickRuns maps the length of a backtick run to the start of the
	// last one seen; backticksScanned says the scan reached the end.
	backtickRuns     map[int]int
	backticksScanned bool
	// searches remembers the results of forward searches, by needle.
	searches []search
	// lastParen is the index of the last ')' in src (no inline link can
	// close after it), -1 if there is none.
	lastParen      int
	lastParenKnown bool
}

// delimiter is a run of '*', '_' or '~' that may open or close emphasis.
type delimiter struct {
	node             *node // its text node
	char             byte
	count, origCount int // characters left, characters in the run
	canOpen          bool
	canClose         bool
	prev, next       *delimiter
}

// bracket is a "[" or "![" that may open a link or image.
type bracket struct {
	node      *node // its text node
	image     bool
	active    bool
	textStart int        // index in src after the bracket
	delimiter *delimiter // the delimiter stack's top when it was read
}

// search is the remembered result of looking for needle from from.
type search struct {
	needle      string
	from, found int
}

// find returns the index of the first needle at or after from, or -1;
// searching again from a later position reuses the last answer when it
// still holds.
func (p *inlineParser) find(from int, needle string) int {
	for i := range p.searches {
		s := &p.searches[i]
		if s.needle != needle {
			continue
		}
		if from >= s.from && (s.found < 0 || s.found >= from) {
			return s.found
		}
		s.from, s.found = from, indexFrom(p.src, from, needle)
		return s.found
	}
	found := indexFrom(p.src, from, needle)
	p.searches = append(p.searches, search{needle: needle, from: from, found: found})
	return found
}

func indexFrom(s string, from int, needle string) int {
	if from > len(s) {
		return -1
	}
	if i := strings.Index(s[from:], needle); i >= 0 {
		return from + i
	}
	return -1
}

// findByte is find for a single byte, in the form scanOpenTag takes.
func (p *inlineParser) findByte(from int, c byte) int {
	switch c {
	case '"':
		return p.find(from, `"`)
	case '\'':
		return p.find(from, "'")
	}
	return indexByteFrom(p.src, from, c)
}

// text appends a text node.
func (p *inlineParser) text(s string) *node {
	n := &node{kind: kindText, literal: s}
	p.block.appendChild(n)
	return n
}

func (p *inlineParser) step() {
	switch c := p.src[p.pos]; c {
	case '\n':
		p.lineBreak(false)
	case '\\':
		p.backslash()
	case '`':
		p.codeSpan()
	case '*', '_', '~':
		p.delimiterRun(c)
	case '[':
		p.pos++
		p.pushBracket(p.text("["), false)
	case '!':
		if p.pos+1 < len(p.src) && p.src[p.pos+1] == '[' {
			p.pos += 2
			p.pushBracket(p.text("!["), true)
			return
		}
		p.pos++
		p.text("!")
	case ']':
		p.closeBracket()
	case '<':
		if !p.autolink() && !p.rawHTML() {
			p.pos++
			p.text("<")
		}
	case '&':
		p.entity()
	default:
		end := p.pos + 1
		for end < len(p.src) && !isInlineSpecial(p.src[end]) {
			end++
		}
		p.text(p.src[p.pos:end])
		p.pos = end
	}
}

func isInlineSpecial(c byte) bool {
	switch c {
	case '\n', '\\', '`', '*', '_', '~', '[', ']', '!', '<', '&':
		return true
	}
	return false
}

// lineBreak handles the line end at p.pos: a hard break after two spaces
// (or a backslash, hard set), else a soft one; the spaces around it go.
func (p *inlineParser) lineBreak(hard bool) {
	if last := p.block.lastChild; last != nil && last.kind == kindText && !hard {
		trimmed := strings.TrimRight(last.literal, " ")
		hard = len(last.literal)-len(trimmed) >= 2
		last.literal = trimmed
	}
	kind := kindSoftBreak
	if hard {
		kind = kindHardBreak
	}
	p.block.appendChild(&node{kind: kind})
	p.pos++
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
		p.pos++
	}
}

func (p *inlineParser) backslash() {
	next := byte(0)
	if p.pos+1 < len(p.src) {
		next = p.src[p.pos+1]
	}
	switch {
	case next == '\n':
		p.pos++
		p.lineBreak(true)
	case isASCIIPunct(next):
		p.text(p.src[p.pos+1 : p.pos+2])
		p.pos += 2
	default:
		p.text("\\")
		p.pos++
	}
}

func isASCIIPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}

// codeSpan reads a backtick run and, if a run of the same length closes
// it, the code between them.
func (p *inlineParser) codeSpan() {
	start := p.pos
	end := start
	for end < len(p.src) && p.src[end] == '`' {
		end++
	}
	closer := p.backtickRun(end, end-start)
	if closer < 0 {
		p.text(p.src[start:end])
		p.pos = end
		return
	}
	code := strings.ReplaceAll(p.src[end:closer], "\n", " ")
	if len(code) >= 2 && code[0] == ' ' && code[len(code)-1] == ' ' && strings.Trim(code, " ") != "" {
		code = code[1 : len(code)-1]
	}
	p.block.appendChild(&node{kind: kindCodeSpan, literal: code})
	p.pos = closer + end - start
}

// backtickRun returns the start of the first run of exactly n backticks
// at or after from, or -1.
func (p *inlineParser) backtickRun(from, n int) int {
	if p.backticksScanned {
		if last, ok := p.backtickRuns[n]; !ok || last < from {
			return -1
		}
	}
	if p.backtickRuns == nil {
		p.backtickRuns = map[int]int{}
	}
	for i := from; i < len(p.src); {
		j := strings.IndexByte(p.src[i:], '`')
		if j < 0 {
			break
		}
		start := i + j
		end := start
		for end < len(p.src) && p.src[end] == '`' {
			end++
		}
		p.backtickRuns[end-start] = start
		if end-start == n {
			return start
		}
		i = end
	}
	p.backticksScanned = true
	return -1
}

// delimiterRun reads a run of c and pushes it on the delimiter stack if
// it can open or close emphasis (or, for '~', strikethrough).
func (p *inlineParser) delimiterRun(c byte) {
	start := p.pos
	end := start
	for end < len(p.src) && p.src[end] == c {
		end++
	}
	p.pos = end
	node := p.text(p.src[start:end])
	count := end - start
	if c == '~' && count > 2 {
		return // only ~one~ or ~~two~~ strike through
	}

	before, after := '\n', '\n' // the ends of the text count as whitespace
	if start > 0 {
		before, _ = utf8.DecodeLastRuneInString(p.src[:start])
	}
	if end < len(p.src) {
		after, _ = utf8.DecodeRuneInString(p.src[end:])
	}
	beforeSpace, afterSpace := unicode.IsSpace(before), unicode.IsSpace(after)
	beforePunct, afterPunct := isPunct(before), isPunct(after)
	leftFlanking := !afterSpace && (!afterPunct || beforeSpace || beforePunct)
	rightFlanking := !beforeSpace && (!beforePunct || afterSpace || afterPunct)

	var canOpen, canClose bool
	switch c {
	case '_':
		canOpen = leftFlanking && (!rightFlanking || beforePunct)
		canClose = rightFlanking && (!leftFlanking || afterPunct)
	case '*':
		canOpen, canClose = leftFlanking, rightFlanking
		// A single star between letters or digits is arithmetic or a
		// glob ("2*3*4", "a*b"), not emphasis. (CommonMark would
		// emphasise; replies mean the characters far more often.)
		if count == 1 && isAlnum(before) && isAlnum(after) {
			canOpen, canClose = false, false
		}
	default:
		canOpen, canClose = leftFlanking, rightFlanking
	}
	if !canOpen && !canClose {
		return
	}
	d := &delimiter{node: node, char: c, count: count, origCount: count, canOpen: canOpen, canClose: canClose, prev: p.delimiters}
	if p.delimiters != nil {
		p.delimiters.next = d
	}
	p.delimiters = d
}

// isPunct: Unicode punctuation or symbols, as CommonMark defines
// punctuation for flanking.
func isPunct(r rune) bool {
	if r < utf8.RuneSelf {
		return isASCIIPunct(byte(r))
	}
	return unicode.IsPunct(r) || unicode.IsSymbol(r)
}

func isAlnum(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

func (p *inlineParser) removeDelimiter(d *delimiter) {
	if d.prev != nil {
		d.prev.next = d.next
	}
	if d.next != nil {
		d.next.prev = d.prev
	} else {
		p.delimiters = d.prev
	}
}

// processEmphasis matches the delimiters above bottom (nil: all of them)
// into emphasis, strong emphasis and strikethrough, and removes them from
// the stack.
func (p *inlineParser) processEmphasis(bottom *delimiter) {
	// openersBottom[i]: no opener for closers of class i exists at or
	// below it, so the search for one stops there (linear time).
	var openersBottom [18]*delimiter
	for i := range openersBottom {
		openersBottom[i] = bottom
	}
	closer := p.delimiters
	for closer != nil && closer.prev != bottom {
		closer = closer.prev
	}
	for closer != nil {
		if !closer.canClose {
			closer = closer.next
			continue
		}
		class := closerClass(closer)
		opener := closer.prev
		for opener != nil && opener != bottom && opener != openersBottom[class] {
			if opener.char == closer.char && opener.canOpen && delimitersMatch(opener, closer) {
				break
			}
			opener = opener.prev
		}
		if opener == nil || opener == bottom || opener == openersBottom[class] {
			openersBottom[class] = closer.prev
			next := closer.next
			if !closer.canOpen {
				p.removeDelimiter(closer)
			}
			closer = next
			continue
		}

		use := 1
		if closer.char == '~' {
			use = closer.count
		} else if opener.count >= 2 && closer.count >= 2 {
			use = 2
		}
		opener.count -= use
		closer.count -= use
		opener.node.literal = opener.node.literal[:opener.count]
		closer.node.literal = closer.node.literal[:closer.count]

		wrapper := &node{kind: kindEmphasis, level: uint8(use)}
		if closer.char == '~' {
			wrapper.kind = kindStrikethrough
		}
		for c := opener.node.next; c != nil && c != closer.node; {
			next := c.next
			c.unlink()
			wrapper.appendChild(c)
			c = next
		}
		opener.node.insertAfter(wrapper)
		// The delimiters between them can no longer match.
		opener.next = closer
		closer.prev = opener

		if opener.count == 0 {
			opener.node.unlink()
			p.removeDelimiter(opener)
		}
		if closer.count == 0 {
			closer.node.unlink()
			next := closer.next
			p.removeDelimiter(closer)
			closer = next
		}
	}
	for p.delimiters != nil && p.delimiters != bottom {
		p.removeDelimiter(p.delimiters)
	}
}

// closerClass groups closers that look for the same openers.
func closerClass(d *delimiter) int {
	switch d.char {
	case '*':
		return boolIndex(d.canOpen)*3 + d.origCount%3
	case '_':
		return 6 + boolIndex(d.canOpen)*3 + d.origCount%3
	}
	return 12 + d.origCount
}

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}

// delimitersMatch: tildes match a run of the same length; for stars and
// underscores, when one of the runs can both open and close, the sum of
// their lengths must not be a multiple of three unless both are.
func delimitersMatch(opener, closer *delimiter) bool {
	if closer.char == '~' {
		return opener.origCount == closer.origCount
	}
	if (opener.canClose || closer.canOpen) && closer.origCount%3 != 0 && (opener.origCount+closer.origCount)%3 == 0 {
		return false
	}
	return true
}

func (p *inlineParser) pushBracket(n *node, image bool) {
	p.brackets = append(p.brackets, bracket{node: n, image: image, active: true, textStart: p.pos, delimiter: p.delimiters})
}

func (p *inlineParser) popBracket() {
	p.brackets = p.brackets[:len(p.brackets)-1]
	p.inactiveBelow = min(p.inactiveBelow, len(p.brackets))
}

// closeBracket handles "]": a link or image if an opener is waiting and
// a destination follows (inline, or a reference), else the text "]".
func (p *inlineParser) closeBracket() {
	closeAt := p.pos
	p.pos++
	if len(p.brackets) == 0 {
		p.text("]")
		return
	}
	opener := p.brackets[len(p.brackets)-1]
	if !opener.active {
		p.popBracket()
		p.text("]")
		return
	}
	dest, ok := p.inlineLinkTail()
	if !ok {
		dest, ok = p.referenceLinkTail(p.src[opener.textStart:closeAt])
	}
	if !ok {
		p.popBracket()
		p.text("]")
		return
	}
	link := &node{kind: kindLink, dest: dest}
	if opener.image {
		link.kind = kindImage
	}
	for c := opener.node.next; c != nil; {
		next := c.next
		c.unlink()
		link.appendChild(c)
		c = next
	}
	p.block.appendChild(link)
	p.processEmphasis(opener.delimiter)
	p.popBracket()
	opener.node.unlink()
	if !opener.image {
		for i := len(p.brackets) - 1; i >= p.inactiveBelow; i-- {
			if !p.brackets[i].image {
				p.brackets[i].active = false
			}
		}
		p.inactiveBelow = len(p.brackets)
	}
}

// inlineLinkTail reads "(destination "title")" at p.pos.
func (p *inlineParser) inlineLinkTail() (string, bool) {
	if p.pos >= len(p.src) || p.src[p.pos] != '(' {
		return "", false
	}
	if !p.lastParenKnown {
		p.lastParen, p.lastParenKnown = strings.LastIndexByte(p.src, ')'), true
	}
	if p.pos > p.lastParen {
		return "", false // no ')' left to close it
	}
	i := skipLinkSpace(p.src, p.pos+1)
	dest, end, ok := scanLinkDestination(p.src, i)
	if !ok {
		return "", false
	}
	i = skipLinkSpace(p.src, end)
	if i > end && i < len(p.src) {
		if titleEnd := scanLinkTitle(p.src, i, p.findByte); titleEnd > 0 {
			i = skipLinkSpace(p.src, titleEnd)
		}
	}
	if i >= len(p.src) || p.src[i] != ')' {
		return "", false
	}
	p.pos = i + 1
	return dest, true
}

// referenceLinkTail resolves a reference link whose bracketed text is
// text: "[text][label]", "[text][]" or "[text]".
func (p *inlineParser) referenceLinkTail(text string) (string, bool) {
	if len(p.refs) == 0 || len(text) > 999 {
		return "", false // labels are at most 999 characters
	}
	label := text
	end := p.pos
	if labelEnd := scanLinkLabel(p.src, p.pos); labelEnd > 0 {
		if inner := p.src[p.pos+1 : labelEnd-1]; strings.TrimSpace(inner) != "" {
			label = inner
		}
		end = labelEnd
	}
	dest, ok := p.refs[normalizeLabel(label)]
	if ok {
		p.pos = end
	}
	return dest, ok
}

// skipLinkSpace skips spaces and tabs and at most one line end.
func skipLinkSpace(s string, i int) int {
	newline := false
	for i < len(s) {
		switch s[i] {
		case ' ', '\t':
		case '\n':
			if newline {
				return i
			}
			newline = true
		default:
			return i
		}
		i++
	}
	return i
}

// scanLinkDestination reads a destination at i: "<...>" or a run
// without spaces whose parentheses balance.
func scanLinkDestination(s string, i int) (dest string, end int, ok bool) {
	if i < len(s) && s[i] == '<' {
		for j := i + 1; j < len(s); j++ {
			switch s[j] {
			case '\\':
				j++
			case '\n', '<':
				return "", 0, false
			case '>':
				return unescape(s[i+1 : j]), j + 1, true
			}
		}
		return "", 0, false
	}
	depth := 0
	j := i
scan:
	for ; j < len(s); j++ {
		switch c := s[j]; {
		case c == '\\' && j+1 < len(s) && isASCIIPunct(s[j+1]):
			j++
		case c == '(':
			depth++
			if depth > 32 {
				return "", 0, false
			}
		case c == ')':
			if depth == 0 {
				break scan
			}
			depth--
		case c <= ' ' || c == 0x7f:
			break scan
		}
	}
	if depth != 0 {
		return "", 0, false
	}
	return unescape(s[i:j]), j, true
}

// scanLinkTitle returns the end of the title ("...", '...' or (...)) at
// s[i], or -1; find(from, c) finds the next quote (see scanOpenTag).
func scanLinkTitle(s string, i int, find func(from int, c byte) int) int {
	switch quote := s[i]; quote {
	case '"', '\'':
		for j := i + 1; ; {
			k := find(j, quote)
			if k < 0 {
				return -1
			}
			if !escaped(s, k) {
				return k + 1
			}
			j = k + 1
		}
	case '(':
		for j := i + 1; j < len(s); j++ {
			switch s[j] {
			case '\\':
				j++
			case '(':
				return -1
			case ')':
				return j + 1
			}
		}
	}
	return -1
}

// escaped reports whether s[i] follows an odd number of backslashes.
func escaped(s string, i int) bool {
	n := 0
	for i > 0 && s[i-1] == '\\' {
		n++
		i--
	}
	return n%2 == 1
}

// scanLinkLabel returns the end of the link label ("[...]", at most 999
// characters, no unescaped brackets inside) at i, or -1.
func scanLinkLabel(s string, i int) int {
	if i >= len(s) || s[i] != '[' {
		return -1
	}
	for j := i + 1; j < len(s) && j-i <= 1000; j++ {
		switch s[j] {
		case '\\':
			j++
		case '[':
			return -1
		case ']':
			return j + 1
		}
	}
	return -1
}

// normalizeLabel makes labels that differ in case or spacing equal.
func normalizeLabel(s string) string {
	return strings.ToLower(strings.ToUpper(strings.Join(strings.Fields(s), " ")))
}

// autolink reads "<scheme:...>" or "<user@host>" at p.pos.
func (p *inlineParser) autolink() bool {
	closer := p.find(p.pos+1, ">")
	if closer < 0 {
		return false
	}
	body := p.src[p.pos+1 : closer]
	dest := ""
	switch {
	case isURIAutolink(body):
		dest = body
	case isEmailAutolink(body):
		dest = "mailto:" + body
	default:
		return false
	}
	p.block.appendChild(&node{kind: kindAutoLink, literal: body, dest: dest})
	p.pos = closer + 1
	return true
}

// isURIAutolink: a scheme of 2-32 characters, a colon, then no spaces
// or angle brackets. It stops at the first byte that cannot belong, so
// that trying it at every "<" stays linear.
func isURIAutolink(s string) bool {
	colon := 0
	for colon < len(s) && colon <= 32 && s[colon] != ':' {
		if c := s[colon]; !isASCIILetter(c) && (colon == 0 || !isASCIIDigit(c) && c != '+' && c != '.' && c != '-') {
			return false
		}
		colon++
	}
	if colon < 2 || colon > 32 || colon == len(s) {
		return false
	}
	for i := colon + 1; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c == '<' || c == 0x7f {
			return false
		}
	}
	return true
}

func isEmailAutolink(s string) bool {
	at := 0
	for at < len(s) && s[at] != '@' {
		if c := s[at]; !isASCIILetter(c) && !isASCIIDigit(c) && strings.IndexByte(".!#$%&'*+/=?^_`{|}~-", c) < 0 {
			return false
		}
		at++
	}
	if at == 0 || at == len(s) {
		return false
	}
	for _, label := range strings.Split(s[at+1:], ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; !isASCIILetter(c) && !isASCIIDigit(c) && c != '-' {
				return false
			}
		}
	}
	return true
}

// rawHTML reads an inline HTML tag, comment, processing instruction,
// declaration or CDATA section at p.pos.
func (p *inlineParser) rawHTML() bool {
	s, i := p.src, p.pos
	end := -1
	switch {
	case strings.HasPrefix(s[i:], "<!-->"):
		end = i + 5
	case strings.HasPrefix(s[i:], "<!--->"):
		end = i + 6
	case strings.HasPrefix(s[i:], "<!--"):
		if k := p.find(i+4, "-->"); k >= 0 {
			end = k + 3
		}
	case strings.HasPrefix(s[i:], "<?"):
		if k := p.find(i+2, "?>"); k >= 0 {
			end = k + 2
		}
	case strings.HasPrefix(s[i:], "<![CDATA["):
		if k := p.find(i+9, "]]>"); k >= 0 {
			end = k + 3
		}
	case strings.HasPrefix(s[i:], "<!") && i+2 < len(s) && isASCIILetter(s[i+2]):
		if k := p.find(i+2, ">"); k >= 0 {
			end = k + 1
		}
	case strings.HasPrefix(s[i:], "</"):
		end = scanClosingTag(s, i)
	default:
		end = scanOpenTag(s, i, p.findByte)
	}
	if end < 0 {
		return false
	}
	p.block.appendChild(&node{kind: kindRawHTML, literal: s[i:end]})
	p.pos = end
	return true
}

// entity decodes an entity or numeric character reference at p.pos.
func (p *inlineParser) entity() {
	if r, n := decodeEntity(p.src[p.pos:]); n > 0 {
		p.text(r)
		p.pos += n
		return
	}
	p.text("&")
	p.pos++
}

// unescape resolves backslash escapes and entities in a link destination
// or title.
func unescape(s string) string {
	if strings.IndexByte(s, '\\') < 0 && strings.IndexByte(s, '&') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s) && isASCIIPunct(s[i+1]):
			b.WriteByte(s[i+1])
			i++
		case c == '&':
			if r, n := decodeEntity(s[i:]); n > 0 {
				b.WriteString(r)
				i += n - 1
			} else {
				b.WriteByte(c)
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// mergeText joins adjacent text nodes (the parser leaves one per
// delimiter, escape and entity) so that bare URLs are found whole, and
// drops empty ones.
func mergeText(n *node) {
	for c := n.firstChild; c != nil; {
		next := c.next
		if c.kind != kindText {
			mergeText(c)
			c = next
			continue
		}
		if next != nil && next.kind == kindText {
			var b strings.Builder
			b.WriteString(c.literal)
			for next != nil && next.kind == kindText {
				b.WriteString(next.literal)
				after := next.next
				next.unlink()
				next = after
			}
			c.literal = b.String()
		}
		if c.literal == "" {
			c.unlink()
		}
		c = next
	}
}
