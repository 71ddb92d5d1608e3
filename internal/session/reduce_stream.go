package session

import (
	"bufio"
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
	return newReducerFromReader(rd, sizeHint, 256<<10)
}

func newReducerFromReader(rd io.Reader, sizeHint int64, bufSize int) (r *Reducer, n int64, c *Corruption, err error) {
	lr := lineReader{br: bufio.NewReaderSize(rd, bufSize)}
	head, ok, err := lr.next()
	if err != nil {
		return nil, lr.n, nil, err
	}
	if !ok {
		return nil, lr.n, &Corruption{Code: CorruptMissingHeader, Line: 1, Detail: "no complete header line"}, nil
	}
	h, c := DecodeHeader(head)
	if c != nil {
		return nil, lr.n, c, nil
	}
	// Sessions run at several hundred bytes per fact; guessing low only
	// costs some growth later.
	r = newReducer(h, int(sizeHint/1024))
	r.st.RepairedLength = lr.n
	r.loading = true
	for {
		line, ok, err := lr.next()
		if err != nil {
			return nil, lr.n, nil, err
		}
		if !ok {
			break
		}
		// The decoder copies what it keeps, so the line's buffer is
		// reused for the next one.
		if c := r.ApplyLine(line, r.lines+1); c != nil {
			return nil, lr.n, c, nil
		}
	}
	r.loading = false
	return r, lr.n, nil, nil
}

// ReduceReader is Reduce over a reader (see NewReducerFromReader).
func ReduceReader(rd io.Reader, sizeHint int64) (*State, *Corruption, error) {
	r, _, c, err := NewReducerFromReader(rd, sizeHint)
	if err != nil || c != nil {
		return nil, c, err
	}
	return r.State(), nil, nil
}

// lineReader yields the LF-terminated lines of a reader; bytes after the
// last LF (a torn tail) are counted in n but never yielded.
type lineReader struct {
	br   *bufio.Reader
	long []byte // a line longer than the buffer, assembled
	n    int64  // bytes read
}

// next returns the next complete line without its LF, valid until the next
// call; ok is false at the end.
func (l *lineReader) next() (line []byte, ok bool, err error) {
	l.long = l.long[:0]
	for {
		b, err := l.br.ReadSlice('\n')
		l.n += int64(len(b))
		switch {
		case err == nil:
			b = b[:len(b)-1]
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
