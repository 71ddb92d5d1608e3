package session

import (
	"fmt"
	"runtime/debug"

	"golang.org/x/sys/unix"
)

// populateAhead is how much of a mapped session the decoder maps ahead of
// itself at a time.
const populateAhead = 8 << 20

// populate maps the pages of b, a part of a read-only file mapping, in
// one call (MADV_POPULATE_READ, Linux 5.14; older kernels ignore it): on a
// virtual machine a fault per page costs more than reading the page
// (issue 17).
func populate(b []byte) {
	if len(b) > 0 {
		_ = unix.Madvise(b, unix.MADV_POPULATE_READ)
	}
}

// dropLag is how far behind the applier a mapped session's pages are
// taken out of the process.
const dropLag = 32 << 20

// dropBehind takes the pages of the mapping more than dropLag before off
// out of the process (MADV_DONTNEED: they stay in the page cache, and a
// later read maps them again), so that a load's resident memory is its
// state and a window of the file, not the whole file. It starts from the
// file's start every time: a compaction hashes the messages since the
// previous one, which maps their pages again. Only the applier calls it:
// the decoder is always ahead of it.
func (l *lineReader) dropBehind(off int) {
	if off-l.dropped < 2*dropLag {
		return
	}
	end := (off - dropLag) &^ (pageSize - 1)
	_ = unix.Madvise(l.all[:end], unix.MADV_DONTNEED)
	l.dropped = end
}

var pageSize = unix.Getpagesize()

// ErrMappingFault is returned when reading a mapped session faulted: the
// file was cut short under the reader.
var ErrMappingFault = fmt.Errorf("session: the file shrank while it was read; read it again")

// catchFault turns a fault while reading a mapping into *err, and any other
// panic into itself again. Call it deferred, on a goroutine that set
// debug.SetPanicOnFault(true).
func catchFault(err *error) {
	if p := recover(); p != nil {
		if _, ok := p.(interface{ Addr() uintptr }); ok {
			*err = ErrMappingFault
			return
		}
		panic(p)
	}
}

// faultsPanic makes faults on this goroutine panics until the returned
// func is called.
func faultsPanic() (restore func()) {
	old := debug.SetPanicOnFault(true)
	return func() { debug.SetPanicOnFault(old) }
}
