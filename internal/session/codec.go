package session

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// checkFraming checks what holds for every committed line before it is
// parsed: no CR before the LF, not empty, valid UTF-8 (session.md §1).
// Invalid UTF-8 inside a JSON string (a raw lone surrogate, say) is
// MALFORMED_JSON; anywhere else in the line it is INVALID_UTF8.
func checkFraming(line []byte) *Corruption {
	switch {
	case len(line) > 0 && line[len(line)-1] == '\r':
		return corrupt(CorruptCRLF, 0, "line ends with CRLF")
	case len(line) == 0:
		return corrupt(CorruptBlankLine, 0, "empty line")
	case utf8.Valid(line):
		return nil
	case invalidUTF8InString(line):
		return corrupt(CorruptMalformedJSON, 0, "invalid UTF-8 inside a JSON string")
	}
	return corrupt(CorruptInvalidUTF8, 0, "line is not valid UTF-8")
}

// invalidUTF8InString reports whether the first invalid UTF-8 sequence of
// line lies inside a string literal.
func invalidUTF8InString(line []byte) bool {
	inString := false
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c >= utf8.RuneSelf:
			if r, size := utf8.DecodeRune(line[i:]); r == utf8.RuneError && size == 1 {
				return inString
			} else {
				i += size
			}
		case c == '"':
			inString = !inString
			i++
		case c == '\\' && inString:
			i += 2
		default:
			i++
		}
	}
	return false
}

// The codec maps lines to typed values and back. Encoding is canonical:
// every object is written in RFC 8785 (JCS) form, members sorted by UTF-16
// code units and no insignificant whitespace, so the same facts always
// produce the same bytes (the bytes other runtimes write too). Decoding is
// strict: closed objects, members only of the variant at hand, the
// session.schema.json value constraints, and strict JSON.
//
// Encode* return the committed line INCLUDING its terminating LF; Decode*
// take the line WITHOUT it.

// EncodeHeader returns the header line (line 1), LF-terminated. It does
// not validate h; DecodeHeader(EncodeHeader(h)) does.
func EncodeHeader(h Header) []byte {
	b := make([]byte, 0, 128+len(h.Cwd)+len(h.EnvironmentIdentity))
	b = append(b, '{')
	b = appendIntMember(b, true, "createdAt", h.CreatedAt)
	b = appendStringMember(b, false, "cwd", h.Cwd)
	b = appendStringMember(b, false, "environmentIdentity", h.EnvironmentIdentity)
	b = appendStringMember(b, false, "id", h.ID)
	b = appendStringMember(b, false, "kind", "header")
	b = appendStringMember(b, false, "model", h.Model)
	b = appendStringMember(b, false, "provider", h.Provider)
	b = appendIntMember(b, false, "version", Version)
	return append(b, '}', '\n')
}

// DecodeHeader decodes line 1 (without its LF). Not strict JSON is
// MALFORMED_JSON; a transaction where the header belongs is
// MISSING_HEADER; a header of another version is UNSUPPORTED_VERSION;
// anything else that is not exactly a version-2 header is INVALID_HEADER.
// The returned Corruption has Line 1.
func DecodeHeader(line []byte) (Header, *Corruption) {
	if c := checkFraming(line); c != nil {
		c.Line = 1
		return Header{}, c
	}
	var rd reader
	h, err := decodeHeader(&rd, line)
	if err == nil {
		return h, nil
	}
	c := &Corruption{Code: CorruptInvalidHeader, Line: 1, Detail: err.Error()}
	var he *headerError
	switch {
	case errors.Is(err, errSyntax):
		c.Code = CorruptMalformedJSON
	case errors.As(err, &he):
		c.Code = he.code
	}
	return Header{}, c
}

// headerError carries a header-specific code.
type headerError struct {
	code string
	msg  string
}

func (e *headerError) Error() string { return e.msg }

func decodeHeader(rd *reader, line []byte) (Header, error) {
	var h Header
	if err := rd.load(line); err != nil {
		return h, err
	}
	if rd.kind() == '[' {
		if err := rd.skip(); err != nil {
			return h, err
		}
		return h, &headerError{CorruptMissingHeader, "line 1 is a transaction, not a header"}
	}
	if err := rd.beginObject("the header"); err != nil {
		return h, err
	}
	hs := headerScan{version: -1}
	if err := hs.members(rd, &h); err != nil {
		return h, err
	}
	if err := rd.end(); err != nil {
		return h, err
	}
	switch kind := hs.kind; {
	case kind == "entry" || kind == "record" || kind == "usage":
		return h, &headerError{CorruptMissingHeader, "line 1 is a fact, not a header"}
	case kind != "header":
		return h, &headerError{CorruptInvalidHeader, `line 1 is not a header (kind must be "header")`}
	case hs.version >= 0 && hs.version != Version:
		return h, &headerError{CorruptUnsupportedVersion, fmt.Sprintf("session format version %d is not supported (want %d)", hs.version, Version)}
	case hs.firstErr != nil:
		return h, hs.firstErr
	case hs.have != hAll:
		return h, shapeErr("the header lacks a required member")
	}
	return h, nil
}

// The header's members, one bit each in headerScan.have.
const (
	hKind = 1 << iota
	hVersion
	hID
	hCreatedAt
	hCwd
	hProvider
	hModel
	hEnv
	hAll = 1<<iota - 1
)

// headerScan is what reading the header's members found: the members
// seen, kind and version (checked after the whole object is read, so a
// fact on line 1 is named as such), and the first shape error.
type headerScan struct {
	have     uint
	kind     string
	version  int64
	firstErr error
}

// members reads the header object's members into h. Only a syntax error
// stops it; a shape error is kept and reading goes on.
func (hs *headerScan) members(rd *reader, h *Header) error {
	for {
		more, err := rd.more()
		if err != nil || !more {
			return err
		}
		name, err := rd.name()
		if err != nil {
			return err
		}
		var bit uint
		switch string(name) {
		case "kind":
			bit = hKind
			hs.kind, err = rd.sym("kind")
		case "version":
			bit = hVersion
			var v int64
			if v, err = rd.safeInt("version"); err == nil {
				hs.version = v
			}
		case "id":
			bit = hID
			h.ID, err = rd.uuid("id")
		case "createdAt":
			bit = hCreatedAt
			h.CreatedAt, err = rd.safeInt("createdAt")
		case "cwd":
			bit = hCwd
			h.Cwd, err = rd.nonEmpty("cwd")
		case "provider":
			bit = hProvider
			h.Provider, err = rd.nonEmpty("provider")
		case "model":
			bit = hModel
			h.Model, err = rd.nonEmpty("model")
		case "environmentIdentity":
			bit = hEnv
			h.EnvironmentIdentity, err = rd.nonEmpty("environmentIdentity")
		default:
			hs.keep(shapeErr(fmt.Sprintf("unknown header member %q", name)))
			err = rd.skip()
		}
		if err != nil {
			if errors.Is(err, errSyntax) {
				return err
			}
			hs.keep(err)
		}
		member(rd, &hs.have, bit)
	}
}

func (hs *headerScan) keep(err error) {
	if hs.firstErr == nil {
		hs.firstErr = err
	}
}
