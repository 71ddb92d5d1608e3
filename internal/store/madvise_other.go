//go:build !linux

package store

import "golang.org/x/sys/unix"

// populateRead is only a hint where MADV_POPULATE_READ does not exist.
const populateRead = unix.MADV_WILLNEED
