package store

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// ReadSession reduces the session file f in one pass, as the readers of
// one whole session do (store open, `session state`, `verify`, `show`).
// It reads f through a read-only shared mapping (session.ReadMapped), so
// that the state references the file's bytes instead of copying the text
// of every message (issue 17); a file that cannot be mapped (empty, not a
// regular file, a file system without mmap) is streamed instead, with the
// same result. The offset of a regular file is not moved.
//
// The mapping is never unmapped: the state, and any string taken from it,
// may live as long as the process, and what it costs is address space.
// A session file is only appended to, and its committed lines are never
// rewritten (repair cuts only what follows them). A file cut short by
// someone else during the pass is an error (session.ErrMappingFault);
// reading a message past the new end afterwards faults, as in any program
// that maps its data.
func ReadSession(f *os.File, hooks session.ReadHooks) (r *session.Reducer, n int64, c *session.Corruption, err error) {
	return openSource(f).read(hooks)
}

// source is a session file to read whole: its mapping, or the file itself
// when it cannot be mapped. A store that reads the file twice (a lean read
// that must be done again in full) maps it once.
type source struct {
	f    *os.File
	size int64  // -1: not a regular file
	data []byte // the mapping, nil when streamed
}

func openSource(f *os.File) source {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return source{f: f, size: -1}
	}
	data, _ := mapFile(f, fi.Size())
	return source{f: f, size: fi.Size(), data: data}
}

func (s source) read(hooks session.ReadHooks) (*session.Reducer, int64, *session.Corruption, error) {
	switch {
	case s.size < 0:
		return session.ReadSession(s.f, 0, hooks) // a pipe, a terminal
	case s.data == nil:
		return session.ReadSession(io.NewSectionReader(s.f, 0, 1<<62), s.size, hooks)
	}
	// Each part of the file is mapped in with one call instead of a page
	// fault per page (MADV_POPULATE_READ, Linux 5.14; older kernels
	// refuse it and fault as before): on a virtual machine a fault costs
	// more than the page it maps (issue 17).
	hooks.Ahead = func(part []byte) { _ = unix.Madvise(part, unix.MADV_POPULATE_READ) }
	return session.ReadMapped(s.data, hooks)
}

// release takes the mapping's pages out of the process (they stay in the
// page cache; reading a message later maps its page again): a store lives
// as long as its session is open, and its resident size should be its
// state, not its file.
func (s source) release() {
	if s.data != nil {
		_ = unix.Madvise(s.data, unix.MADV_DONTNEED)
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
