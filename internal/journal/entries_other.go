//go:build !(linux && (amd64 || arm64))

package journal

import "os"

// Entry is one record of a journal (see the Linux build).
type Entry struct {
	Op, Path, To, Data string
	Size               int64
	Ino                uint64
	Mode               uint32
	UID, GID           int
	Atime, Mtime       int64
	HasMeta            bool
	Inline             []byte
}

// Entries is not supported on this platform.
func Entries(dir string) ([]Entry, error) { return nil, ErrNotSupported }

// Changed is false where the journal is not supported.
func Changed(dir string) bool { return false }

// PutSpans is not supported on this platform.
func PutSpans(data, dst string, size int64) error { return ErrNotSupported }

// PutSpansTo is not supported here.
func PutSpansTo(data string, out *os.File, size int64) error { return ErrNotSupported }
