package store

import (
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// ReadHeader reads and decodes the header of the session file at path;
// the rest of the file is not read.
func ReadHeader(path string) (session.Header, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return session.Header{}, err
	}
	defer f.Close()
	h, _, c, err := readHead(f)
	if err == nil && c != nil {
		err = fmt.Errorf("session %s: %w", path, c)
	}
	return h, err
}

// readHead decodes the header line of the session read from rd and says
// whether a committed line follows it, reading no further than the end of
// that line (session.LineReader).
func readHead(rd io.Reader) (h session.Header, more bool, c *session.Corruption, err error) {
	lr := session.NewLineReader(rd, 4<<10)
	head, ok, err := lr.Next()
	switch {
	case err != nil:
		return h, false, nil, err
	case !ok:
		return h, false, &session.Corruption{Code: session.CorruptMissingHeader, Line: 1, Detail: "no complete header line"}, nil
	}
	if h, c = session.DecodeHeader(head[:len(head)-1]); c != nil {
		return h, false, c, nil
	}
	_, more, err = lr.Next()
	return h, more, nil, err
}

// Head is what the name and header line of a session file tell, read
// without the rest of the file.
type Head struct {
	ID, Path string
	// Started is the header's createdAt, or the name's stamp when the
	// header is unreadable (as List has it for a corrupt session).
	Started time.Time
	Stamp   time.Time // the file name's
	// Lines: a committed line follows the header.
	Lines bool
	// Corruption is set when the header is not valid or its id is not
	// the file name's.
	Corruption *session.Corruption
}

// Heads lists the sessions of cwd in List's order, newest first, reading
// only their header lines: a caller that wants one session (--continue)
// reduces that one, not every file. A missing directory is an empty list.
func Heads(cwd string) ([]Head, error) {
	out, err := eachSession(cwd, func(f *os.File, id string, stamp time.Time) (Head, error) {
		h, more, c, err := readHead(f)
		hd := Head{ID: id, Path: f.Name(), Started: stamp, Stamp: stamp, Lines: more, Corruption: c}
		switch {
		case err != nil || c != nil:
		case h.ID != id:
			hd.Corruption = &session.Corruption{Code: session.CorruptInvalidHeader, Line: 1, Detail: "header id does not match the file name"}
		default:
			hd.Started = time.UnixMilli(h.CreatedAt).UTC()
		}
		return hd, err
	})
	slices.SortFunc(out, func(a, b Head) int { return newestFirst(a.Started, a.ID, b.Started, b.ID) })
	return out, err
}

// Summarize summarizes the session file of a head as List does, reducing
// it (streamed).
func Summarize(h Head) (Summary, error) {
	f, err := os.OpenFile(h.Path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return Summary{}, err
	}
	defer f.Close()
	return summarize(f, h.ID, h.Stamp)
}
