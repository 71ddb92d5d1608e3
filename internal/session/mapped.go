package session

import (
	"fmt"
	"runtime/debug"
)

// aheadBlock is the size of the parts of a mapped session that
// ReadHooks.Ahead gets; they start at its multiples, so on page
// boundaries.
const aheadBlock = 8 << 20

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
