// The strict reader's typed values: interned symbols, UUIDv7 ids, digests
// and integers JSON can carry exactly.

package session

import (
	"math"
	"strconv"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
)

// aliases reports whether b is a non-empty part of aliased input (not of
// the unquoting scratch buffer).
func (r *reader) aliases(b []byte) bool {
	if !r.alias || len(b) == 0 || len(r.buf) == 0 {
		return false
	}
	p, lo := uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(&r.buf[0]))
	return p >= lo && p < lo+uintptr(len(r.buf))
}

// sym reads a string that is usually one of the format's fixed words,
// returning the word without allocating.
func (r *reader) sym(what string) (string, error) {
	b, err := r.strBytes(what)
	if err != nil {
		return "", err
	}
	if s := symbol(b); s != "" {
		return s, nil
	}
	return string(b), nil
}

// interned reads a non-empty string that repeats across lines (tool
// names, call ids, snapshot members) and shares one copy of each.
func (r *reader) interned(what string) (string, error) {
	b, err := r.strBytes(what)
	if err != nil {
		return "", err
	}
	if len(b) == 0 {
		return "", shapeErr(what + " must not be empty")
	}
	return r.intern(b), nil
}

func (r *reader) intern(b []byte) string {
	if r.strs == nil || len(b) > 128 {
		return r.keep(r.arena, b)
	}
	if s, ok := r.strs[string(b)]; ok {
		return s
	}
	// A copy even from a mapped file: the table's keys are read at every
	// lookup, and the pages of a mapped file are given back after a read
	// (store.ReadSession).
	s := r.arena.string(b)
	if len(r.strs) >= 4096 {
		clear(r.strs) // bound the memory; interning is only an optimization
	}
	r.strs[s] = s
	return s
}

// symbol returns the fixed word equal to b, or "".
func symbol(b []byte) string {
	switch string(b) {
	case "entry":
		return "entry"
	case "record":
		return "record"
	case "usage":
		return "usage"
	case "header":
		return "header"
	case "message":
		return "message"
	case "compaction":
		return "compaction"
	case "user":
		return "user"
	case "assistant":
		return "assistant"
	case "tool":
		return "tool"
	case "stop":
		return "stop"
	case "toolUse":
		return "toolUse"
	case "length":
		return "length"
	case "success":
		return "success"
	case "error":
		return "error"
	case "synthetic":
		return "synthetic"
	case "interrupted":
		return "interrupted"
	case "invalidArguments":
		return "invalidArguments"
	case "unknownTool":
		return "unknownTool"
	case "truncated":
		return "truncated"
	case "aborted":
		return "aborted"
	case "runStarted":
		return "runStarted"
	case "compactionStarted":
		return "compactionStarted"
	case "stepAttempt":
		return "stepAttempt"
	case "stepFailed":
		return "stepFailed"
	case "toolStarted":
		return "toolStarted"
	case "abortRequested":
		return "abortRequested"
	case "operationFinished":
		return "operationFinished"
	case "run":
		return "run"
	case "model":
		return "model"
	case "compact":
		return "compact"
	case "escape":
		return "escape"
	case "completed":
		return "completed"
	case "failed":
		return "failed"
	case "normal":
		return "normal"
	case "safe":
		return "safe"
	case "never":
		return "never"
	case "function":
		return "function"
	}
	return ""
}

// nonEmpty reads a string that must not be empty.
func (r *reader) nonEmpty(what string) (string, error) {
	s, err := r.str(what)
	if err == nil && s == "" {
		err = shapeErr(what + " must not be empty")
	}
	return s, err
}

// uuid reads a lowercase UUIDv7 string.
func (r *reader) uuid(what string) (string, error) {
	// Fast path: a UUID's characters need no escaping, so a valid one is
	// exactly the 36 bytes between two quotes.
	if r.kind() == '"' && len(r.buf)-r.pos >= 38 && r.buf[r.pos+37] == '"' {
		if b := r.buf[r.pos+1 : r.pos+37]; isUUIDv7(b) {
			r.pos += 38
			return r.keep(r.ids, b), nil
		}
	}
	b, err := r.strBytes(what)
	if err != nil {
		return "", err
	}
	if !isUUIDv7(b) {
		return "", shapeErr(what + " must be a lowercase UUIDv7")
	}
	return r.keep(r.ids, b), nil
}

// digest reads a "sha256:<64 lowercase hex>" string.
func (r *reader) digest(what string) (string, error) {
	b, err := r.strBytes(what)
	if err != nil {
		return "", err
	}
	if !isDigest(b) {
		return "", shapeErr(what + " must be sha256:<64 lowercase hex digits>")
	}
	return r.intern(b), nil
}

// safeInt reads a number whose value is an integer in 0..2^53-1. Like a
// JSON Schema "integer", 1.0 and 1e0 are the integer 1.
func (r *reader) safeInt(what string) (int64, error) {
	if r.kind() != '0' {
		if err := r.skip(); err != nil {
			return 0, err
		}
		return 0, shapeErr(what + " must be an integer")
	}
	v, err := r.rawValue()
	if err != nil {
		return 0, err
	}
	n, ok := parseSafeInt(v)
	if !ok {
		return 0, shapeErr(what + " must be an integer in 0..2^53-1")
	}
	return n, nil
}

// rawObject reads an object value and returns a copy of its bytes.
func (r *reader) rawObject(what string) (jsontext.Value, error) {
	if r.kind() != '{' {
		if err := r.skip(); err != nil {
			return nil, err
		}
		return nil, shapeErr(what + " must be an object")
	}
	v, err := r.rawValue()
	if err != nil {
		return nil, err
	}
	// A copy even from aliased input: a []byte may be written to, and a
	// read-only mapping must never be.
	return r.arena.bytes(v), nil
}

// parseSafeInt interprets a JSON number literal the way a JavaScript
// reader would (as a float64) and accepts it when that value is an integer
// in 0..2^53-1.
func parseSafeInt(lit []byte) (int64, bool) {
	if len(lit) <= 15 {
		var n int64
		digits := true
		for _, c := range lit {
			if c < '0' || c > '9' {
				digits = false
				break
			}
			n = n*10 + int64(c-'0')
		}
		if digits {
			return n, true // leading zeros were rejected as syntax
		}
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil || f != math.Trunc(f) || f < 0 || f > maxSafeInteger {
		return 0, false
	}
	return int64(f), true
}

// isUUIDv7 matches ^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$.
func isUUIDv7[T string | []byte](s T) bool {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' || s[14] != '7' {
		return false
	}
	switch s[19] {
	case '8', '9', 'a', 'b':
	default:
		return false
	}
	for i := 0; i < 36; i++ {
		if !isLowerHex(s[i]) && i != 8 && i != 13 && i != 18 && i != 23 {
			return false
		}
	}
	return true
}

// isDigest matches ^sha256:[0-9a-f]{64}$.
func isDigest[T string | []byte](s T) bool {
	const prefix = "sha256:"
	if len(s) != len(prefix)+64 || string(s[:len(prefix)]) != prefix {
		return false
	}
	for i := len(prefix); i < len(s); i++ {
		if !isLowerHex(s[i]) {
			return false
		}
	}
	return true
}

func isLowerHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' }
