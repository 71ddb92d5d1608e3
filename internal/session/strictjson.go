package session

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// The session format's JSON is strict: jsontext, with its default options,
// already rejects duplicate member names at any depth (also when one of
// them is escaped), escaped or raw lone surrogates, and invalid UTF-8
// anywhere in the text. strictjson_test.go pins each of those cases, so an
// upgrade that relaxes a default fails loudly.

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

// syntaxError wraps a jsontext error.
type syntaxError struct{ err error }

func (e *syntaxError) Error() string { return e.err.Error() }
func (e *syntaxError) Unwrap() error { return errSyntax }

// reader reads one strict JSON document token by token. Names are matched
// without allocating; string values are copied out because the decoder's
// buffer is reused.
type reader struct {
	dec     jsontext.Decoder
	src     bytes.Reader
	scratch []byte
}

func (r *reader) reset(b []byte) {
	r.src.Reset(b)
	r.dec.Reset(&r.src)
}

func (r *reader) syntax(err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return &syntaxError{err}
}

// kind peeks at the kind of the next token.
func (r *reader) kind() jsontext.Kind { return r.dec.PeekKind() }

// end checks that nothing but whitespace follows the top-level value.
func (r *reader) end() error {
	if _, err := r.dec.ReadToken(); err != io.EOF {
		if err == nil {
			return &syntaxError{errors.New("jsontext: more than one value on the line")}
		}
		return r.syntax(err)
	}
	return nil
}

// beginObject consumes '{'; a different value is a shape error, after it
// has been consumed so that the caller can keep scanning for syntax.
func (r *reader) beginObject(what string) error {
	return r.begin('{', what+" must be an object")
}

func (r *reader) beginArray(what string) error {
	return r.begin('[', what+" must be an array")
}

func (r *reader) begin(k jsontext.Kind, msg string) error {
	if r.dec.PeekKind() != k {
		if err := r.skip(); err != nil {
			return err
		}
		return shapeErr(msg)
	}
	if _, err := r.dec.ReadToken(); err != nil {
		return r.syntax(err)
	}
	return nil
}

// more reports whether the current object or array has another member;
// when it has not, it consumes the closing token.
func (r *reader) more() (bool, error) {
	switch r.dec.PeekKind() {
	case '}', ']':
		if _, err := r.dec.ReadToken(); err != nil {
			return false, r.syntax(err)
		}
		return false, nil
	case 0:
		_, err := r.dec.ReadToken()
		return false, r.syntax(err)
	}
	return true, nil
}

// name reads an object member name. The returned bytes are valid until the
// next read.
func (r *reader) name() ([]byte, error) {
	v, err := r.dec.ReadValue()
	if err != nil {
		return nil, r.syntax(err)
	}
	return r.unquote(v)
}

func (r *reader) unquote(v jsontext.Value) ([]byte, error) {
	body := v[1 : len(v)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return body, nil
	}
	var err error
	r.scratch, err = jsontext.AppendUnquote(r.scratch[:0], v)
	if err != nil {
		return nil, r.syntax(err)
	}
	return r.scratch, nil
}

// skip consumes the next value whatever it is.
func (r *reader) skip() error {
	if err := r.dec.SkipValue(); err != nil {
		return r.syntax(err)
	}
	return nil
}

// str reads a string value.
func (r *reader) str(what string) (string, error) {
	if r.dec.PeekKind() != '"' {
		if err := r.skip(); err != nil {
			return "", err
		}
		return "", shapeErr(what + " must be a string")
	}
	v, err := r.dec.ReadValue()
	if err != nil {
		return "", r.syntax(err)
	}
	b, err := r.unquote(v)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// nonEmpty reads a string that must not be empty.
func (r *reader) nonEmpty(what string) (string, error) {
	s, err := r.str(what)
	if err == nil && s == "" {
		err = shapeErr(what + " must not be empty")
	}
	return s, err
}

// nullableStr reads a string or null (nil).
func (r *reader) nullableStr(what string) (*string, error) {
	if r.dec.PeekKind() == 'n' {
		if _, err := r.dec.ReadToken(); err != nil {
			return nil, r.syntax(err)
		}
		return nil, nil
	}
	s, err := r.str(what + " must be a string or null; it")
	if err != nil {
		return nil, err
	}
	return &s, nil
}

// uuid reads a lowercase UUIDv7 string.
func (r *reader) uuid(what string) (string, error) {
	s, err := r.str(what)
	if err == nil && !isUUIDv7(s) {
		err = shapeErr(what + " must be a lowercase UUIDv7")
	}
	return s, err
}

// digest reads a "sha256:<64 lowercase hex>" string.
func (r *reader) digest(what string) (string, error) {
	s, err := r.str(what)
	if err == nil && !isDigest(s) {
		err = shapeErr(what + " must be sha256:<64 lowercase hex digits>")
	}
	return s, err
}

// safeInt reads a number whose value is an integer in 0..2^53-1. Like a
// JSON Schema "integer", 1.0 and 1e0 are the integer 1.
func (r *reader) safeInt(what string) (int64, error) {
	if r.dec.PeekKind() != '0' {
		if err := r.skip(); err != nil {
			return 0, err
		}
		return 0, shapeErr(what + " must be an integer")
	}
	v, err := r.dec.ReadValue()
	if err != nil {
		return 0, r.syntax(err)
	}
	n, ok := parseSafeInt(v)
	if !ok {
		return 0, shapeErr(what + " must be an integer in 0..2^53-1")
	}
	return n, nil
}

// rawObject reads an object value and returns a copy of its bytes.
func (r *reader) rawObject(what string) (jsontext.Value, error) {
	if r.dec.PeekKind() != '{' {
		if err := r.skip(); err != nil {
			return nil, err
		}
		return nil, shapeErr(what + " must be an object")
	}
	v, err := r.dec.ReadValue()
	if err != nil {
		return nil, r.syntax(err)
	}
	return bytes.Clone(v), nil
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
			return n, true // jsontext has rejected leading zeros
		}
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil || f != math.Trunc(f) || f < 0 || f > maxSafeInteger {
		return 0, false
	}
	return int64(f), true
}

// isUUIDv7 matches ^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$.
func isUUIDv7(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		case 14:
			if c != '7' {
				return false
			}
		case 19:
			if c != '8' && c != '9' && c != 'a' && c != 'b' {
				return false
			}
		default:
			if !isLowerHex(c) {
				return false
			}
		}
	}
	return true
}

// isDigest matches ^sha256:[0-9a-f]{64}$.
func isDigest(s string) bool {
	const prefix = "sha256:"
	if len(s) != len(prefix)+64 || s[:len(prefix)] != prefix {
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

// validStrict reports whether b is exactly one strict JSON value.
func validStrict(b []byte) bool { return jsontext.Value(b).IsValid() }
