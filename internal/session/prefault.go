package session

import "golang.org/x/sys/unix"

// prefault maps b's pages in one call instead of one page fault each
// (MADV_POPULATE_WRITE, Linux 5.14): on a virtual machine a fault on fresh
// memory costs far more than the memory (issue 17). Contents are kept; on
// an older kernel it does nothing.
func prefault(b []byte) {
	if len(b) >= 64<<10 {
		_ = unix.Madvise(b, unix.MADV_POPULATE_WRITE)
	}
}
