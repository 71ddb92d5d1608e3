package session

import (
	"bufio"
	"io"
)

// LineReader yields the committed lines of a session file (each one
// LF-terminated; bytes after the final LF, a torn tail, are counted but
// never yielded) for readers that stream a session without reducing it: a
// fork's copy, a list of its user turns. Memory is the buffer plus the
// longest line.
type LineReader struct{ lr lineReader }

// NewLineReader reads lines from rd through a buffer of bufSize bytes.
func NewLineReader(rd io.Reader, bufSize int) *LineReader {
	return &LineReader{lr: lineReader{br: bufio.NewReaderSize(rd, bufSize)}}
}

// Next returns the next committed line with its LF, valid until the next
// call; ok is false at the end of the committed lines.
func (l *LineReader) Next() (line []byte, ok bool, err error) { return l.lr.next() }

// Offset is the number of bytes read: after Next returned a line, the
// offset just past its LF.
func (l *LineReader) Offset() int64 { return l.lr.n }

// Decoder decodes transaction lines one after another like
// DecodeTransaction, reusing its buffers between lines: the facts slice
// it returns is valid until the next Decode (their payloads stay valid).
// Short strings are carved from shared 32 KiB chunks, as the reducer's
// are: a caller that keeps a few of them copies them (strings.Clone), or
// each one holds its chunk.
type Decoder struct{ d txDecoder }

// Decode decodes one transaction line (without its LF).
func (d *Decoder) Decode(line []byte) ([]Fact, *Corruption) {
	if d.d.rd.arena == nil {
		d.d.rd.arena, d.d.rd.ids = &strArena{}, &strArena{}
	}
	return d.d.decode(line)
}
