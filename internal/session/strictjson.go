package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
)

// The session format's JSON is strict. jsontext, with its default
// options, decides what is strict JSON: it rejects duplicate member names
// at any depth (also when one of them is escaped), escaped or raw lone
// surrogates, and invalid UTF-8 anywhere in the text; strictjson_test.go
// pins each of those cases, so an upgrade that relaxes a default fails
// loudly.
//
// Lines are read by reader in one of two modes. A strict reader (the fast
// path) checks everything while it decodes: syntax, control characters,
// escapes (through jsontext.AppendUnquote), numbers and literals, and
// duplicate names (a typed object sees a member bit twice; free-form
// values go through checkValue). The caller has checked the line is valid
// UTF-8. Whatever a strict reader does not like, including valid but
// unusual text it declines to judge (deep nesting, escaped or very many
// names in free-form objects), is an error, and the caller then falls
// back: jsontext validates the line as a whole, and a trusted reader walks
// the validated bytes again, doing no checking of its own beyond staying
// in bounds, to find what is wrong with the shape. So a line is accepted
// only if the strict reader accepts it, and jsontext has the last word on
// every line it rejects. (Decoding token by token through
// jsontext.Decoder measured 3x slower; validating every line with
// jsontext before walking it took a third of Reduce's time.)

// maxSafeInteger is 2^53-1, the largest counter or id number the format
// allows.
const maxSafeInteger = 1<<53 - 1

// errSyntax marks text that is not strict JSON (MALFORMED_JSON); errShape
// marks strict JSON of the wrong shape (INVALID_FACT / INVALID_HEADER).
var (
	errSyntax = errors.New("malformed JSON")
	errShape  = errors.New("invalid shape")
)

// shapeError describes why a well-formed value has the wrong shape.
type shapeError struct{ msg string }

func (e *shapeError) Error() string { return e.msg }
func (e *shapeError) Unwrap() error { return errShape }

func shapeErr(msg string) error { return &shapeError{msg} }

// syntaxError wraps the reason text is not strict JSON.
type syntaxError struct{ err error }

func (e *syntaxError) Error() string { return e.err.Error() }
func (e *syntaxError) Unwrap() error { return errSyntax }

// validStrict reports whether b is exactly one strict JSON value
// (whitespace around it allowed).
func validStrict(b []byte) bool { return jsontext.Value(b).IsValid() }

// strictError says why b is not strict JSON (slow path: jsontext's
// message), or nil when it is.
func strictError(b []byte) error {
	if validStrict(b) {
		return nil
	}
	d := jsontext.NewDecoder(bytes.NewReader(b))
	_, err := d.ReadValue()
	if err == nil {
		if _, err = d.ReadToken(); err == nil {
			err = errors.New("jsontext: more than one value on the line")
		}
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return &syntaxError{err}
}

// errTruncated is what reader reports if the bytes it trusts end early;
// it cannot happen after validation.
var errTruncated = &syntaxError{io.ErrUnexpectedEOF}

// errDuplicateName is what a reader reports for a member name seen twice
// in one object.
var errDuplicateName = &syntaxError{errors.New("duplicate member name")}

// reader walks one JSON value, strictly or trusting it (see above). Names
// are matched without allocating; string values are copied out.
type reader struct {
	buf     []byte
	pos     int
	trusted bool // buf is known to be strict JSON
	// closers holds '}' or ']' for each open object or array that the
	// typed decoders entered; first is true until the innermost one has
	// a member.
	closers []byte
	first   bool
	dup     bool // a typed object had a member twice
	scratch []byte
	names   []span            // member names of the objects checkValue is in
	strs    map[string]string // interned strings; nil interns nothing
	// Arenas back the copied strings (nil allocates each): ids for
	// UUIDs, which the reducer's id map keeps, and arena for the rest,
	// which is mostly the text of the state. Apart, the chunks that a
	// reduced state keeps hold few of the ids only its reducer needed.
	arena, ids *strArena
	// alias is set when buf is part of bytes that never change and
	// outlive whatever is decoded (a read-only mapping of the session
	// file): a string without escapes then references buf instead of
	// being copied.
	alias bool
}

// load validates b as strict JSON and starts reading it, trusted.
func (r *reader) load(b []byte) error {
	if err := strictError(b); err != nil {
		return err
	}
	r.reset(b, true)
	return nil
}

// reset starts reading b.
func (r *reader) reset(b []byte, trusted bool) {
	r.buf, r.pos, r.trusted = b, 0, trusted
	r.closers, r.first, r.dup = r.closers[:0], false, false
	r.names = r.names[:0]
}

// member adds bit to *have, the members an object has shown so far. A
// bit seen twice is a duplicate name: it sets dup, and the line fails.
// (The typed decoders know their members, so this is all the duplicate
// check they need; free-form values go through checkValue.)
func member[T uint | uint64](r *reader, have *T, bit T) {
	if *have&bit != 0 {
		r.dup = true
	}
	*have |= bit
}

func (r *reader) ws() {
	for r.pos < len(r.buf) {
		switch c := r.buf[r.pos]; {
		case c > ' ': // the common case: no whitespace at all
			return
		case c == ' ', c == '\t', c == '\n', c == '\r':
			r.pos++
		default:
			return
		}
	}
}

// kind returns the next value's first byte, normalized like
// jsontext.Kind: '0' for any number, 0 at the end.
func (r *reader) kind() byte {
	r.ws()
	if r.pos >= len(r.buf) {
		return 0
	}
	switch c := r.buf[r.pos]; c {
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return '0'
	default:
		return c
	}
}

// end checks that nothing but whitespace follows the top-level value.
func (r *reader) end() error {
	if r.ws(); r.pos < len(r.buf) { // (not kind: a NUL byte is kind 0)
		return &syntaxError{errors.New("more than one value on the line")}
	}
	return nil
}

// beginObject consumes '{'; a different value is a shape error.
func (r *reader) beginObject(what string) error {
	return r.begin('{', what, " must be an object")
}

func (r *reader) beginArray(what string) error {
	return r.begin('[', what, " must be an array")
}

// begin takes the message in two parts so that the common, matching case
// builds no string.
func (r *reader) begin(k byte, what, must string) error {
	if r.kind() != k {
		if err := r.skip(); err != nil {
			return err
		}
		return shapeErr(what + must)
	}
	r.pos++
	closer := byte('}')
	if k == '[' {
		closer = ']'
	}
	r.closers = append(r.closers, closer)
	r.first = true
	return nil
}

// more reports whether the current object or array has another member;
// when it has not, it consumes the closing token. Members are separated
// by commas; what a member starts with is checked by whoever reads it.
func (r *reader) more() (bool, error) {
	c := r.kind()
	n := len(r.closers)
	switch {
	case c == 0 || n == 0:
		return false, errTruncated
	case c == r.closers[n-1]:
		r.pos++
		r.closers = r.closers[:n-1]
		r.first = false // the enclosing container has this member
		return false, nil
	case r.first:
		r.first = false
		return true, nil
	case c == ',':
		r.pos++
		return true, nil
	}
	return false, &syntaxError{fmt.Errorf("invalid character %q after a member", c)}
}

// name reads an object member name and its colon. The returned bytes are
// valid until the next read.
func (r *reader) name() ([]byte, error) {
	r.ws()
	b, err := r.quoted()
	if err != nil {
		return nil, err
	}
	r.ws()
	if r.pos >= len(r.buf) || r.buf[r.pos] != ':' {
		return nil, errTruncated
	}
	r.pos++
	return b, nil
}

// members reads an object, calling fn with each member's name for it to
// read the value. Neither members nor elements keeps fn, so the decoders'
// closures stay on their stacks and cost no allocation.
func (r *reader) members(what string, fn func(name []byte) error) error {
	if err := r.beginObject(what); err != nil {
		return err
	}
	for {
		more, err := r.more()
		if err != nil || !more {
			return err
		}
		name, err := r.name()
		if err != nil {
			return err
		}
		if err := fn(name); err != nil {
			return err
		}
	}
}

// elements reads an array, calling fn to read each element.
func (r *reader) elements(what string, fn func() error) error {
	if err := r.beginArray(what); err != nil {
		return err
	}
	for {
		more, err := r.more()
		if err != nil || !more {
			return err
		}
		if err := fn(); err != nil {
			return err
		}
	}
}

// quoted reads the string at pos and returns its unquoted bytes.
func (r *reader) quoted() ([]byte, error) {
	start := r.pos
	escaped, err := r.skipString()
	if err != nil {
		return nil, err
	}
	if !escaped {
		return r.buf[start+1 : r.pos-1], nil
	}
	if r.scratch, err = jsontext.AppendUnquote(r.scratch[:0], r.buf[start:r.pos]); err != nil {
		return nil, &syntaxError{err}
	}
	return r.scratch, nil
}

// skipString moves past the string at pos and reports whether it has
// escapes. It rejects raw control characters; the escapes themselves are
// checked by whoever unquotes or checks the string.
func (r *reader) skipString() (escaped bool, _ error) {
	if r.pos >= len(r.buf) || r.buf[r.pos] != '"' {
		return false, errTruncated
	}
	i := r.pos + 1
	for {
		i += plainPrefix(r.buf[i:])
		if i >= len(r.buf) {
			return false, errTruncated
		}
		switch r.buf[i] {
		case '"':
			r.pos = i + 1
			return escaped, nil
		case '\\':
			escaped = true
			i += 2 // skip the escape's first character, maybe a quote
			if i > len(r.buf) {
				return false, errTruncated
			}
		default:
			return false, &syntaxError{errors.New("control character in a string")}
		}
	}
}

// skip consumes the next value whatever it is.
func (r *reader) skip() error {
	_, err := r.rawValue()
	return err
}

// rawValue consumes the next value and returns its bytes (aliasing the
// line). A strict reader checks the value.
func (r *reader) rawValue() ([]byte, error) {
	if !r.trusted {
		r.ws()
		start := r.pos
		if err := r.checkValue(0); err != nil {
			return nil, err
		}
		return r.buf[start:r.pos], nil
	}
	r.ws()
	start := r.pos
	if r.pos >= len(r.buf) {
		return nil, errTruncated
	}
	switch r.buf[r.pos] {
	case '"':
		if _, err := r.skipString(); err != nil {
			return nil, err
		}
	case '{', '[':
		depth := 0
		for {
			if r.pos >= len(r.buf) {
				return nil, errTruncated
			}
			switch r.buf[r.pos] {
			case '"':
				if _, err := r.skipString(); err != nil {
					return nil, err
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			r.pos++
			if depth == 0 {
				break
			}
		}
	default: // a number or a literal
		for r.pos < len(r.buf) && isScalarByte(r.buf[r.pos]) {
			r.pos++
		}
		if r.pos == start {
			return nil, errTruncated
		}
	}
	return r.buf[start:r.pos], nil
}

// isScalarByte reports whether c can be part of a number or literal.
func isScalarByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'E'
}

// strBytes reads a string value and returns its unquoted bytes, valid
// until the next read.
func (r *reader) strBytes(what string) ([]byte, error) {
	if r.kind() != '"' {
		if err := r.skip(); err != nil {
			return nil, err
		}
		return nil, shapeErr(what + " must be a string")
	}
	return r.quoted()
}

// str reads a string value.
func (r *reader) str(what string) (string, error) {
	b, err := r.strBytes(what)
	return r.keep(r.arena, b), err
}

// keep returns b as a string that outlives the line: b itself when it
// lies in aliased input, else a copy in arena a.
func (r *reader) keep(a *strArena, b []byte) string {
	if r.aliases(b) {
		return unsafe.String(&b[0], len(b))
	}
	return a.string(b)
}
