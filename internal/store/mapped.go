package store

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// dropEvery is how much of a mapped session is read before its pages are
// taken out of the process (see ReadSession).
const dropEvery = 32 << 20

// ReadSession reduces the session file f in one pass (session.ReadSession)
// from a read-only shared mapping of it, so that the state references the
// file's bytes instead of copying the text of every message (issue 17): a
// load then touches little memory besides the page cache the file is in
// anyway. A file that cannot be mapped (empty, not a regular file, a file
// system without mmap) is streamed instead, with the same result.
//
// The mapping is never unmapped: the state, and whatever strings are taken
// from it, may live as long as the process. What it costs is address space.
// Its pages are taken out of the process as the pass moves on and at its
// end (they stay in the page cache, and a later read of a message maps its
// page again), so the resident size is the state, not the file.
//
// A session file is only ever appended to, and its committed lines are
// never rewritten (repair cuts only what follows them). A file cut short
// by someone else during the pass is an error; after it, reading a string
// past the new end would fault, as in any program that maps its data.
func ReadSession(f *os.File, hooks session.ReadHooks) (r *session.Reducer, n int64, c *session.Corruption, err error) {
	var size int64
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		size = fi.Size()
	}
	data, merr := mapFile(f, size)
	if merr != nil {
		return session.ReadSession(io.NewSectionReader(f, 0, 1<<62), size, hooks)
	}
	defer func() {
		// Out of the process, not out of the mapping.
		_ = unix.Madvise(data, unix.MADV_DONTNEED)
	}()
	// A fault while reading the mapping (the file was cut under us) is
	// an error of this read, not the end of the process.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			if e, ok := p.(interface{ Addr() uintptr }); ok {
				r, c, err = nil, nil, fmt.Errorf("session file %s shrank while it was read (fault at %#x)", f.Name(), e.Addr())
				return
			}
			panic(p)
		}
	}()
	line := hooks.Line
	var dropped, read int
	hooks.Line = func(b []byte) {
		if line != nil {
			line(b)
		}
		read += len(b)
		if read-dropped >= dropEvery {
			end := read &^ (os.Getpagesize() - 1)
			_ = unix.Madvise(data[dropped:end], unix.MADV_DONTNEED)
			dropped = end
		}
	}
	return session.ReadMapped(data, hooks)
}

// mapFile maps the first size bytes of f read-only.
func mapFile(f *os.File, size int64) ([]byte, error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, fmt.Errorf("%s: nothing to map", f.Name())
	}
	return unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
}
