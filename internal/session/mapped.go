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
var populate = func(b []byte) {
	if len(b) > 0 {
		_ = unix.Madvise(b, unix.MADV_POPULATE_READ)
	}
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
