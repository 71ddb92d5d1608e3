package tools

import (
	"bytes"
	"unicode/utf8"
)

// Output limits shared by read, bash and bg (tools.md).
const (
	MaxOutputLines = 2000
	MaxOutputBytes = 50 * 1024 // 51,200 bytes
)

// TailBuffer is an io.Writer that counts everything written to it but keeps
// only the last few bytes needed to show the tail of the stream, so a command
// printing gigabytes costs a constant amount of memory.
//
// Lines are separated by '\n'; a final '\n' ends the last line rather than
// starting an empty one, so "a\nb\n" is two lines.
type TailBuffer struct {
	maxLines int
	maxBytes int
	keep     int    // bytes of the stream end that are always retained
	window   []byte // the end of the stream; len(window) >= min(total, keep)
	total    int64
	newlines int64
	last     byte
}

// Tail is the part of a stream that fits the limits, taken from its end.
type Tail struct {
	Text       []byte
	TotalLines int64 // lines in the whole stream
	FirstLine  int64 // 1-based number of the first line in Text; 0 when empty
	// Truncated reports that the stream exceeded the limits, so Text is
	// only its end.
	Truncated bool
	// Partial reports that Text is the end of a single line longer than
	// maxBytes, cut at a UTF-8 boundary.
	Partial bool
}

// NewTailBuffer returns a TailBuffer that shows at most maxLines lines and
// maxBytes bytes. Limits below 1 are treated as 1.
func NewTailBuffer(maxLines, maxBytes int) *TailBuffer {
	maxLines = max(maxLines, 1)
	maxBytes = max(maxBytes, 1)
	// One byte more than maxBytes shows whether the cut falls on a line
	// start; UTFMax more lets a partial cut move to a rune boundary.
	return &TailBuffer{maxLines: maxLines, maxBytes: maxBytes, keep: maxBytes + utf8.UTFMax}
}

// Write records p. It never fails.
func (t *TailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if n == 0 {
		return 0, nil
	}
	t.total += int64(n)
	t.newlines += int64(bytes.Count(p, []byte{'\n'}))
	t.last = p[n-1]
	switch {
	case n >= t.keep:
		t.window = append(t.window[:0], p[n-t.keep:]...)
	case len(t.window)+n > 2*t.keep:
		// Compact: keep just enough of the old window to hold keep bytes
		// together with p. Amortized, each byte is copied at most twice.
		k := t.keep - n
		copy(t.window, t.window[len(t.window)-k:])
		t.window = append(t.window[:k], p...)
	default:
		if need := len(t.window) + n; need > cap(t.window) {
			// Grow by doubling, but never past the 2*keep the window can reach.
			w := make([]byte, len(t.window), min(max(need, 2*cap(t.window), 512), 2*t.keep))
			copy(w, t.window)
			t.window = w
		}
		t.window = append(t.window, p...)
	}
	return n, nil
}

// Len returns the number of bytes written so far.
func (t *TailBuffer) Len() int64 { return t.total }

// Lines returns the number of lines written so far.
func (t *TailBuffer) Lines() int64 {
	if t.total > 0 && t.last != '\n' {
		return t.newlines + 1
	}
	return t.newlines
}

// Exceeded reports whether the stream no longer fits the limits.
func (t *TailBuffer) Exceeded() bool {
	return t.total > int64(t.maxBytes) || t.Lines() > int64(t.maxLines)
}

// Tail returns the end of the stream that fits the limits: whole lines when
// possible, otherwise the end of the last line. Text aliases the buffer and
// is valid until the next Write.
func (t *TailBuffer) Tail() Tail {
	total := t.Lines()
	if !t.Exceeded() {
		first := int64(0)
		if total > 0 {
			first = 1
		}
		return Tail{Text: t.window, TotalLines: total, FirstLine: first}
	}
	w := t.window
	whole := t.total == int64(len(w)) // the window starts at the stream start
	end := len(w)
	pos := end
	if t.last == '\n' {
		pos-- // the final newline belongs to the last line
	}
	start, shown := -1, int64(0)
	for shown < int64(t.maxLines) {
		i := bytes.LastIndexByte(w[:pos], '\n')
		if i < 0 && !whole {
			break // where this line starts is outside the window
		}
		s := i + 1
		if end-s > t.maxBytes {
			break
		}
		start, shown = s, shown+1
		if i < 0 {
			break
		}
		pos = i
	}
	if start >= 0 {
		return Tail{Text: w[start:], TotalLines: total, FirstLine: total - shown + 1, Truncated: true}
	}
	// The last line alone is too long: keep its end, starting on a rune.
	s := max(end-t.maxBytes, 0)
	for i := 0; i < utf8.UTFMax-1 && s < end && !utf8.RuneStart(w[s]); i++ {
		s++
	}
	return Tail{Text: w[s:], TotalLines: total, FirstLine: total, Truncated: true, Partial: true}
}
