package store

import "golang.org/x/sys/unix"

// populateRead faults a part of the mapping in at once (mapped.go).
const populateRead = unix.MADV_POPULATE_READ
