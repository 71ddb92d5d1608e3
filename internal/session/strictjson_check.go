package session

import (
	"errors"

	"github.com/go-json-experiment/json/jsontext"
)

// The strict reader's checks of free-form values (tool arguments, skipped
// values, the raw configuration snapshot). Valid text that they decline
// to judge is errDeclined, which sends the line to jsontext like any other
// error.

// errDeclined marks valid-looking text that checkValue leaves to jsontext.
var errDeclined = &syntaxError{errors.New("left to the full validator")}

// Limits past which checkValue declines: jsontext allows nesting 10000
// deep and compares any number of names, escaped or not.
const (
	checkMaxDepth = 256
	checkMaxNames = 64
)

// span is a range of the reader's buffer.
type span struct{ start, end int }

// checkValue checks and consumes the value at pos, nested depth deep.
func (r *reader) checkValue(depth int) error {
	r.ws()
	if r.pos >= len(r.buf) {
		return errTruncated
	}
	switch c := r.buf[r.pos]; c {
	case '"':
		return r.checkString()
	case '{', '[':
		if depth >= checkMaxDepth {
			return errDeclined
		}
		return r.checkContainer(c, depth)
	case 't':
		return r.literal("true")
	case 'f':
		return r.literal("false")
	case 'n':
		return r.literal("null")
	}
	return r.checkNumber()
}

func (r *reader) checkContainer(open byte, depth int) error {
	r.pos++
	closer := byte(']')
	if open == '{' {
		closer = '}'
	}
	base := len(r.names)
	defer func() { r.names = r.names[:base] }()
	r.ws()
	if r.pos < len(r.buf) && r.buf[r.pos] == closer {
		r.pos++
		return nil
	}
	for {
		if open == '{' {
			if err := r.checkName(base); err != nil {
				return err
			}
		}
		if err := r.checkValue(depth + 1); err != nil {
			return err
		}
		r.ws()
		if r.pos >= len(r.buf) {
			return errTruncated
		}
		switch r.buf[r.pos] {
		case closer:
			r.pos++
			return nil
		case ',':
			r.pos++
		default:
			return &syntaxError{errors.New("invalid character after a member")}
		}
	}
}

// checkName consumes a member name and its colon, checking that the
// object (whose names start at names[base]) has not had it before.
func (r *reader) checkName(base int) error {
	r.ws()
	start := r.pos
	escaped, err := r.skipString()
	if err != nil {
		return err
	}
	if escaped || len(r.names)-base >= checkMaxNames {
		return errDeclined // comparing unescaped names is jsontext's job
	}
	name := r.buf[start+1 : r.pos-1]
	for _, s := range r.names[base:] {
		if string(r.buf[s.start:s.end]) == string(name) {
			return errDuplicateName
		}
	}
	r.names = append(r.names, span{start + 1, r.pos - 1})
	r.ws()
	if r.pos >= len(r.buf) || r.buf[r.pos] != ':' {
		return &syntaxError{errors.New("missing colon after a member name")}
	}
	r.pos++
	return nil
}

// checkString consumes a string, checking its escapes.
func (r *reader) checkString() error {
	start := r.pos
	escaped, err := r.skipString()
	if err != nil || !escaped {
		return err
	}
	if r.scratch, err = jsontext.AppendUnquote(r.scratch[:0], r.buf[start:r.pos]); err != nil {
		return &syntaxError{err}
	}
	return nil
}

func (r *reader) literal(lit string) error {
	if len(r.buf)-r.pos < len(lit) || string(r.buf[r.pos:r.pos+len(lit)]) != lit {
		return &syntaxError{errors.New("invalid literal")}
	}
	r.pos += len(lit)
	return nil
}

// checkNumber consumes -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (r *reader) checkNumber() error {
	b, i := r.buf, r.pos
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i)
	default:
		return &syntaxError{errors.New("invalid number")}
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return &syntaxError{errors.New("invalid number")}
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return &syntaxError{errors.New("invalid number")}
		}
		i = j
	}
	r.pos = i
	return nil
}

// digits returns the end of the run of decimal digits at b[i:].
func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}
