package ui

import (
	"strings"

	"github.com/tiny-agent/tiny-go/internal/termmd"
)

// streamer turns the streamed Markdown of one model step into terminal
// lines, split in two: lines that are final and go to the scrollback once
// (commit), and the lines still changing that the live area redraws.
//
// The source is cut into top-level blocks (at blank lines outside fenced
// code). A finished block is rendered once more and committed whole. The
// block still streaming is committed as it goes where its rendering only
// grows at the end: a paragraph or list (every rendered line but the last,
// since greedy wrapping never changes an earlier line) and fenced code (in
// chunks of whole source lines, so the cost of a frame stays bounded
// however long the code is). A table is held until it ends, because a new
// row can widen every column.
//
// A block is rendered at the width in force when its first line was
// committed, so a resize never re-wraps lines already in the scrollback.
type streamer struct {
	md    *markdown
	width int // for blocks that start from now on
	chunk int // source lines of fenced code committed at a time

	src string // the step's text so far

	off        int                // start of the block in progress
	blockWidth int                // its rendering width
	started    bool               // lines of it were committed
	done       int                // rendered lines of it committed (paragraph mode)
	codeDone   int                // source lines of its code committed (fence mode)
	code       *termmd.CodeChunks // its rendering, chunk by chunk (fence mode)
	blocks     int                // blocks committed in this step
	live       []string
}

func newStreamer(md *markdown, width, chunk int) *streamer {
	return &streamer{md: md, width: width, chunk: max(chunk, 4)}
}

// reset starts a new step.
func (s *streamer) reset() {
	*s = streamer{md: s.md, width: s.width, chunk: s.chunk}
}

func (s *streamer) empty() bool { return strings.TrimSpace(s.src) == "" }

func (s *streamer) write(text string) { s.src += text }

// setWidth applies to blocks that start after this call.
func (s *streamer) setWidth(w int) { s.width = w }

// advance renders what arrived since the last call and returns the lines
// to commit; with final set the step has ended and everything is
// committed. Afterwards s.live holds the lines still in progress.
func (s *streamer) advance(final bool) []string {
	var out []string
	for {
		end, ok := blockEnd(s.src, s.off)
		if !ok {
			break
		}
		out = s.finishBlock(out, s.src[s.off:end])
		s.off = end
	}
	block := s.src[s.off:]
	if final {
		if strings.TrimSpace(block) != "" {
			out = s.finishBlock(out, block)
		}
		s.off = len(s.src)
		s.live = nil
		return out
	}
	if strings.TrimSpace(block) == "" {
		s.live = nil
		return out
	}
	if !s.started {
		s.blockWidth = s.width // nothing of it is in the scrollback yet
	}
	switch blockKind(block) {
	case kindFence:
		// Chunk by chunk, each going on from the one before (the label
		// once, a string or comment across chunks coloured as one).
		head, body := splitFence(block)
		if !s.started {
			s.code = s.md.codeChunks(s.blockWidth)
		}
		complete := strings.Count(body, "\n")
		for complete-s.codeDone >= s.chunk {
			lines := splitLines(body)[s.codeDone : s.codeDone+s.chunk]
			out = s.commit(out, s.codeLines(head, lines, true))
			s.codeDone += s.chunk
		}
		// The preview: the lines after the last chunk, the line still
		// being written included unless it has not begun.
		rest := splitLines(body)[s.codeDone:]
		if len(rest) > 0 && rest[len(rest)-1] == "" {
			rest = rest[:len(rest)-1]
		}
		s.live = nil
		if len(rest) > 0 || !s.started {
			s.live = s.codeLines(head, rest, false)
		}
	case kindTable:
		// Held whole: only what a paragraph before it committed is skipped.
		lines := s.render(block)
		s.live = lines[min(s.done, len(lines)):]
	default:
		lines := s.render(block)
		// An incomplete line after a blank one may start the next block:
		// commit only from what comes before it.
		stable := len(lines) - 1
		if i := strings.LastIndex(block, "\n\n"); i >= 0 && !strings.Contains(block[i+2:], "\n") {
			stable = len(s.render(block[:i+1])) - 1
		}
		if stable > s.done {
			out = s.commit(out, lines[s.done:stable])
			s.done = stable
		}
		s.live = lines[min(s.done, len(lines)):]
	}
	if !s.started && s.blocks > 0 && len(s.live) > 0 {
		s.live = append([]string{""}, s.live...)
	}
	return out
}

// finishBlock commits what is left of a block that has ended.
func (s *streamer) finishBlock(out []string, block string) []string {
	if strings.TrimSpace(block) != "" {
		if !s.started {
			s.blockWidth = s.width
		}
		switch blockKind(block) {
		case kindFence:
			head, body := splitFence(block)
			lines := splitLines(strings.TrimSuffix(body, "\n"))
			rest := lines[min(s.codeDone, len(lines)):]
			if !s.started || s.code == nil {
				// Nothing of it printed yet: rendered whole.
				text := head + "\n" + strings.Join(rest, "\n")
				if !hasFenceClose(rest, head) {
					text += "\n" + fenceClose(head)
				}
				out = s.commit(out, s.render(text))
			} else {
				if hasFenceClose(rest, head) {
					rest = rest[:len(rest)-1]
				}
				if len(rest) > 0 {
					out = s.commit(out, s.codeLines(head, rest, true))
				}
			}
		default:
			lines := s.render(block)
			out = s.commit(out, lines[min(s.done, len(lines)):])
		}
		if s.started {
			s.blocks++
		}
	}
	s.started, s.done, s.codeDone, s.blockWidth, s.code = false, 0, 0, 0, nil
	return out
}

// commit appends lines of the block in progress, after a gap line when
// it is the first output of a block that follows another.
func (s *streamer) commit(out, lines []string) []string {
	if len(lines) == 0 {
		return out
	}
	if !s.started && s.blocks > 0 {
		out = append(out, "")
	}
	s.started = true
	return append(out, lines...)
}

// codeLines renders lines of the fenced block in progress after its
// opening line head; with commit they are final (see termmd.CodeChunks).
func (s *streamer) codeLines(head string, lines []string, commit bool) []string {
	out := s.code.Render(sanitize(head+"\n"+strings.Join(lines, "\n")), commit)
	for i, l := range out {
		out[i] = trimStyledRight(l)
	}
	return out
}

func (s *streamer) render(text string) []string {
	return renderLines(s.md.render(text, s.blockWidth))
}

// renderLines splits rendered Markdown into lines without the padding
// glamour adds (trailing styled spaces, blank lines around the block).
func renderLines(rendered string) []string {
	lines := strings.Split(rendered, "\n")
	for i, l := range lines {
		lines[i] = trimStyledRight(l)
	}
	for len(lines) > 0 && isBlank(lines[0]) {
		lines = lines[1:]
	}
	for len(lines) > 0 && isBlank(lines[len(lines)-1]) {
		lines = lines[:len(lines)-1]
	}
	return lines
}

func isBlank(line string) bool { return strings.TrimSpace(stripSGR(line)) == "" }

// trimStyledRight removes trailing spaces, including spaces wrapped in
// SGR sequences, and ends the line with a reset if it was styled.
func trimStyledRight(l string) string {
	styled := false
	for {
		t := strings.TrimRight(l, " ")
		if i := strings.LastIndex(t, "\x1b["); i >= 0 && i < len(t) && strings.HasSuffix(t, "m") && isSGR(t[i:]) {
			t, styled = t[:i], true
		}
		if t == l {
			break
		}
		l = t
	}
	if styled && strings.Contains(l, "\x1b[") {
		l += "\x1b[m"
	}
	return l
}

func isSGR(s string) bool {
	if len(s) < 3 || s[0] != 0x1b || s[1] != '[' || s[len(s)-1] != 'm' {
		return false
	}
	for _, c := range s[2 : len(s)-1] {
		if (c < '0' || c > '9') && c != ';' && c != ':' {
			return false
		}
	}
	return true
}

// stripSGR removes SGR sequences (the only escapes glamour writes).
func stripSGR(s string) string {
	if !strings.Contains(s, "\x1b[") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "\x1b[")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		j := strings.IndexByte(s[i:], 'm')
		if j < 0 {
			return b.String()
		}
		s = s[i+j+1:]
	}
}

type kind int

const (
	kindText kind = iota
	kindFence
	kindTable
)

// blockKind classifies a block by its first non-blank line (fenced code)
// or any line that starts with a pipe (a table, or about to become one).
func blockKind(block string) kind {
	first := true
	for _, l := range splitLines(block) {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if first {
			if _, _, ok := fenceOpen(l); ok {
				return kindFence
			}
			first = false
		}
		if strings.HasPrefix(strings.TrimLeft(l, " "), "|") {
			return kindTable
		}
	}
	return kindText
}

// splitFence separates a fenced block's opening line from its body (the
// lines after it, the closing fence included when present).
func splitFence(block string) (head, body string) {
	block = strings.TrimLeft(block, "\n")
	head, body, _ = strings.Cut(block, "\n")
	return head, body
}

func fenceClose(head string) string {
	c, n, _ := fenceOpen(head)
	return strings.Repeat(string(c), n)
}

func hasFenceClose(lines []string, head string) bool {
	if len(lines) == 0 {
		return false
	}
	c, n, _ := fenceOpen(head)
	return isFenceClose(lines[len(lines)-1], c, n)
}

// fenceOpen reports whether line opens a fenced code block: up to three
// spaces, then three or more backticks or tildes.
func fenceOpen(line string) (c byte, n int, ok bool) {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return 0, 0, false
	}
	c = t[0]
	for n < len(t) && t[n] == c {
		n++
	}
	if n < 3 || (c == '`' && strings.ContainsRune(t[n:], '`')) {
		return 0, 0, false
	}
	return c, n, true
}

func isFenceClose(line string, c byte, n int) bool {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return false
	}
	k := 0
	for k < len(t) && t[k] == c {
		k++
	}
	return k >= n && strings.TrimSpace(t[k:]) == ""
}

// blockEnd finds where the block starting at from ends, when a later
// block has begun: at a closing fence, before a fence that opens, or at
// the first unindented line after a blank line. Only complete lines count.
func blockEnd(src string, from int) (int, bool) {
	var (
		content, blank, inFence bool
		fc                      byte
		fn                      int
	)
	pos := from
	for pos < len(src) {
		nl := strings.IndexByte(src[pos:], '\n')
		if nl < 0 {
			return 0, false // an incomplete line decides nothing yet
		}
		line := src[pos : pos+nl]
		next := pos + nl + 1
		switch {
		case inFence:
			if isFenceClose(line, fc, fn) {
				return next, true
			}
		case strings.TrimSpace(line) == "":
			blank = content
		default:
			c, n, open := fenceOpen(line)
			if content && (open || (blank && line[0] != ' ' && line[0] != '\t')) {
				return pos, true
			}
			if open {
				inFence, fc, fn = true, c, n
			}
			content, blank = true, false
		}
		pos = next
	}
	return 0, false
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}
