package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// ReadSession reduces the session file f in one pass, as the readers of
// one whole session do (store open, `session state`, `verify`, `show`).
// It reads f through a read-only shared mapping (session.ReadMapped),
// populated ahead of the decoder in large parts (issue 17); a file that
// cannot be mapped (empty, not a regular file, a file system without
// mmap) is streamed instead, with the same result. The offset of a
// regular file is not moved.
//
// The mapping lives only as long as the pass: the state copies the text
// it keeps (session.ReadHooks.Copy), and the mapping is unmapped before
// ReadSession returns. So a process that loads many sessions (the ACP
// server, a fleet worker, a long interactive session that resumes
// others) holds no mapping of a session it loaded, and a session file
// cut short by another program afterwards cannot fault a reader of the
// state: no SIGBUS anywhere but in the pass, where a fault is an error
// (*ChangedError).
func ReadSession(f *os.File, hooks session.ReadHooks) (r *session.Reducer, n int64, c *session.Corruption, err error) {
	src := openSource(f)
	defer src.close()
	r, n, c, err = src.read(hooks)
	return r, n, c, changed(sessionName(f.Name()), err)
}

// sessionName is the id of the session file at path when its name is
// canonical, else the path.
func sessionName(path string) string {
	if _, id, ok := parseFileName(filepath.Base(path)); ok {
		return id
	}
	return path
}

// ChangedError is the error of a read of a session file that another
// program cut short (truncate -s) while tiny-go was reading it: the pass
// faulted on a page past the new end. Nothing was written to the file.
type ChangedError struct {
	Session string // its id, or its path
}

func (e *ChangedError) Error() string {
	return fmt.Sprintf("session %s changed under tiny-go (truncated by another program while it was being read): nothing was written to it; `tiny-go session verify %s` says what is left (lines cut off cannot be restored: fork the session or start a new one)", e.Session, e.Session)
}

// Unwrap makes errors.Is(err, session.ErrMappingFault) true.
func (e *ChangedError) Unwrap() error { return session.ErrMappingFault }

// changed turns a fault on the mapping into a *ChangedError naming the
// session; other errors stay as they are.
func changed(name string, err error) error {
	if errors.Is(err, session.ErrMappingFault) {
		return &ChangedError{Session: name}
	}
	return err
}

// source is a session file to read whole: its mapping, or the file itself
// when it cannot be mapped. A store that reads the file twice (a lean read
// that must be done again in full) maps it once; close unmaps it.
type source struct {
	f    *os.File
	size int64  // -1: not a regular file
	data []byte // the mapping, nil when streamed
}

func openSource(f *os.File) *source {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return &source{f: f, size: -1}
	}
	data, _ := mapFile(f, fi.Size())
	return &source{f: f, size: fi.Size(), data: data}
}

// read reduces the file in one pass. The state never references the
// mapping (hooks.Copy is set): the mapping can be closed once read
// returns.
func (s *source) read(hooks session.ReadHooks) (*session.Reducer, int64, *session.Corruption, error) {
	switch {
	case s.size < 0:
		return session.ReadSession(s.f, 0, hooks) // a pipe, a terminal
	case s.data == nil:
		return session.ReadSession(io.NewSectionReader(s.f, 0, 1<<62), s.size, hooks)
	}
	hooks.Copy = true
	hooks.Ahead = s.window()
	return session.ReadMapped(s.data, hooks)
}

// window returns the Ahead hook of a pass. Each part of the file is
// mapped in with one call instead of a page fault per page
// (MADV_POPULATE_READ, Linux 5.14; older kernels refuse it and fault as
// before): on a virtual machine a fault costs more than the page it maps
// (issue 17). The part two behind it is given back (MADV_DONTNEED; the
// pages stay in the page cache): the state holds copies, so the pass
// never reads it again (a hook still reading a long line there faults it
// in again), and the process's resident size stays its state plus a few
// parts, not its file.
func (s *source) window() func(part []byte) {
	var behind [2][]byte
	return func(part []byte) {
		if behind[0] != nil {
			_ = unix.Madvise(behind[0], unix.MADV_DONTNEED)
		}
		behind[0], behind[1] = behind[1], part
		_ = unix.Madvise(part, populateRead)
	}
}

// close unmaps the file. Nothing references the mapping after a pass
// (read sets hooks.Copy).
func (s *source) close() {
	if s.data != nil {
		_ = unix.Munmap(s.data)
		s.data = nil
	}
}

// mapFile maps the first size bytes of f read-only. It maps a file
// description of its own (f's file, opened again through /proc): a
// mapping keeps its description open, and the session's lock (flock)
// belongs to f's, which must be released when f is closed.
func mapFile(f *os.File, size int64) ([]byte, error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, os.ErrInvalid
	}
	g, err := os.Open(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	if err != nil {
		return nil, err
	}
	defer g.Close()
	return unix.Mmap(int(g.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
}
