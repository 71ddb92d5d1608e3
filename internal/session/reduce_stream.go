package session

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// NewReducerFromReader reduces a session read from rd like
// NewReducerFromFile, line by line, without holding the file: memory is
// the state plus the longest line. sizeHint (the file size, or 0) sizes
// the reducer. n is the number of bytes read, so n > RepairedLength means
// a torn tail. err is a read error; corruption is reported as for
// NewReducerFromFile, at the same line and seq.
func NewReducerFromReader(rd io.Reader, sizeHint int64) (r *Reducer, n int64, c *Corruption, err error) {
	return ReadSession(rd, sizeHint, ReadHooks{})
}

// ReadHooks let a reader of a whole session do its own work in the one
// pass that reduces it (a summary, a timeline, an integrity hash) instead
// of reading and parsing the file a second time. Every hook may be nil.
type ReadHooks struct {
	// Line gets each committed line with its LF, the header included, in
	// file order, before it is applied: exactly the bytes through the
	// final LF (a torn tail is never passed).
	Line func(line []byte)
	// Header gets the decoded header.
	Header func(h Header)
	// Transaction gets each transaction once it is applied, with its
	// line number; facts are valid only during the call (their payloads
	// are the state's: read them, never change them).
	Transaction func(lineNo int, facts []Fact)

	// Ahead (ReadMapped only) gets each part of the mapped data before
	// the decoder reads into it: aheadBlock bytes (the last part
	// shorter), starting at a multiple of aheadBlock. The store maps a
	// part in with one call instead of a page fault per page.
	Ahead func(part []byte)

	// ReleaseCompacted is not a hook but a mode of the same pass: as
	// each compaction of the file is applied, the reducer drops the text
	// of the assistant and tool messages it summarized (assistant
	// content, tool-call arguments, tool results), which only a reader of
	// the whole history needs; user prompts, roles, ids and every check
	// stay. A resume needs the active context, not a second copy of every
	// compacted message (issue 17). State.Released counts the messages.
	// Verdicts are those of a full read, except that a file whose later
	// compaction retains a released message ends in
	// ErrReleasedTextNeeded: read it again without this mode.
	ReleaseCompacted bool

	// Copy (ReadMapped only) is a mode as well: the state copies the text
	// it keeps instead of referencing the mapped data, so that nothing
	// reads the data once the read returns. The caller can then unmap it
	// at once (a long-lived process loads many sessions), and a file cut
	// short by another program later cannot fault a reader of the state.
	// Hooks still get the mapped bytes, valid only during the call.
	Copy bool
}

// ErrReleasedTextNeeded is returned by ReadSession under ReleaseCompacted
// when a compaction retains a message whose text an earlier compaction
// released, so that it cannot be compared: the caller reads the session
// again in full.
var ErrReleasedTextNeeded = errors.New("session: a compaction retains a message an earlier one released; read the session in full")

// ReadSession is NewReducerFromReader with hooks.
func ReadSession(rd io.Reader, sizeHint int64, hooks ReadHooks) (r *Reducer, n int64, c *Corruption, err error) {
	return newReducerFromReader(rd, sizeHint, 256<<10, hooks)
}

// ReadMapped is ReadSession over data, the whole session file mapped
// read-only: the state references data's bytes (message text, ids)
// instead of copying them, so that a load touches little memory besides
// the file's own pages (issue 17). data must never change and must stay
// mapped for as long as the reducer, its states or any string taken from
// them live, unless hooks.Copy. n counts bytes as ReadSession's does. A
// fault on data (the file was cut short under the reader) is
// ErrMappingFault.
func ReadMapped(data []byte, hooks ReadHooks) (r *Reducer, n int64, c *Corruption, err error) {
	restore := faultsPanic()
	defer restore()
	defer catchFault(&err)
	return readLines(&lineReader{data: data, all: data, ahead: hooks.Ahead, alias: !hooks.Copy}, int64(len(data)), hooks)
}

func newReducerFromReader(rd io.Reader, sizeHint int64, bufSize int, hooks ReadHooks) (r *Reducer, n int64, c *Corruption, err error) {
	return readLines(&lineReader{br: bufio.NewReaderSize(rd, bufSize)}, sizeHint, hooks)
}

func readLines(lr *lineReader, sizeHint int64, hooks ReadHooks) (r *Reducer, n int64, c *Corruption, err error) {
	head, ok, err := lr.next()
	if err != nil {
		return nil, lr.n, nil, err
	}
	if !ok {
		return nil, lr.n, &Corruption{Code: CorruptMissingHeader, Line: 1, Detail: "no complete header line"}, nil
	}
	if hooks.Line != nil {
		hooks.Line(head)
	}
	h, c := DecodeHeader(head[:len(head)-1])
	if c != nil {
		return nil, lr.n, c, nil
	}
	if hooks.Header != nil {
		hooks.Header(h)
	}
	// Sessions run at several hundred bytes per fact; guessing low only
	// costs some growth later.
	r = newReducer(h, int(sizeHint/1024))
	r.st.RepairedLength = lr.n
	r.loading = true
	r.release = hooks.ReleaseCompacted
	n, c, err = r.readBody(lr, hooks)
	if err != nil || c != nil {
		return nil, n, c, err
	}
	r.finishLoad()
	return r, n, nil, nil
}

// ReduceReader is Reduce over a reader (see NewReducerFromReader).
func ReduceReader(rd io.Reader, sizeHint int64) (*State, *Corruption, error) {
	r, _, c, err := NewReducerFromReader(rd, sizeHint)
	if err != nil || c != nil {
		return nil, c, err
	}
	return r.State(), nil, nil
}

// lineReader yields the LF-terminated lines of a reader, or of data when
// br is nil; bytes after the last LF (a torn tail) are counted in n but
// never yielded.
type lineReader struct {
	br    *bufio.Reader
	long  []byte       // a line longer than the buffer, assembled
	n     int64        // bytes read
	data  []byte       // the rest of the mapped file
	all   []byte       // the mapped file
	ahead func([]byte) // ReadHooks.Ahead
	alias bool         // the state may reference data (not ReadHooks.Copy)
	// ahead has had all[:aheadDone].
	aheadDone int
}

// next returns the next complete line with its LF, valid until the next
// call (a mapped file's lines stay valid); ok is false at the end.
func (l *lineReader) next() (line []byte, ok bool, err error) {
	if l.br == nil {
		for off := len(l.all) - len(l.data); l.ahead != nil && off >= l.aheadDone && l.aheadDone < len(l.all); {
			end := min(len(l.all), l.aheadDone+aheadBlock)
			l.ahead(l.all[l.aheadDone:end])
			l.aheadDone = end
		}
		i := bytes.IndexByte(l.data, '\n')
		if i < 0 {
			l.n += int64(len(l.data))
			l.data = nil
			return nil, false, nil
		}
		line, l.data = l.data[:i+1:i+1], l.data[i+1:]
		l.n += int64(i + 1)
		return line, true, nil
	}
	l.long = l.long[:0]
	for {
		b, err := l.br.ReadSlice('\n')
		l.n += int64(len(b))
		switch {
		case err == nil:
			if len(l.long) > 0 {
				l.long = append(l.long, b...)
				return l.long, true, nil
			}
			return b, true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			l.long = append(l.long, b...)
		case errors.Is(err, io.EOF):
			return nil, false, nil
		default:
			return nil, false, err
		}
	}
}
