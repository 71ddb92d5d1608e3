package session

import (
	"bytes"
	"unsafe"
)

// strArena copies the many small strings a reducer decodes (ids, message
// contents) into shared chunks, so that each costs no allocation of its
// own. A chunk is only ever appended to, never rewritten, so the strings
// carved from it stay immutable. A chunk lives as long as any of its
// strings; nearly all of them stay in the state anyway. A nil arena
// allocates each string.
type strArena struct{ buf []byte }

const (
	arenaChunk = 32 << 10
	arenaLarge = arenaChunk / 8 // copied apart, so a chunk wastes little
)

// string returns a copy of b as a string.
func (a *strArena) string(b []byte) string {
	if a == nil || len(b) == 0 || len(b) > arenaLarge {
		return string(b)
	}
	p := a.alloc(b)
	return unsafe.String(&p[0], len(p))
}

// bytes returns a copy of b, capped so that appending to it copies.
func (a *strArena) bytes(b []byte) []byte {
	if a == nil || len(b) == 0 || len(b) > arenaLarge {
		return bytes.Clone(b)
	}
	return a.alloc(b)
}

func (a *strArena) alloc(b []byte) []byte {
	if cap(a.buf)-len(a.buf) < len(b) {
		a.buf = make([]byte, 0, arenaChunk)
	}
	start := len(a.buf)
	a.buf = append(a.buf, b...)
	return a.buf[start:len(a.buf):len(a.buf)]
}
