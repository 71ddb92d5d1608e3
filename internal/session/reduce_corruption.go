package session

import "fmt"

// Corruption codes (expected-state.schema.json).
const (
	CorruptInvalidUTF8        = "INVALID_UTF8"
	CorruptMissingHeader      = "MISSING_HEADER"
	CorruptInvalidHeader      = "INVALID_HEADER"
	CorruptUnsupportedVersion = "UNSUPPORTED_VERSION"
	CorruptBlankLine          = "BLANK_LINE"
	CorruptCRLF               = "CRLF_NOT_ALLOWED"
	CorruptMalformedJSON      = "MALFORMED_JSON"
	CorruptEmptyTransaction   = "EMPTY_TRANSACTION"
	CorruptInvalidFact        = "INVALID_FACT"
	CorruptSeqMismatch        = "SEQ_MISMATCH"
	CorruptDuplicateID        = "DUPLICATE_ID"
	CorruptInvalidReference   = "INVALID_REFERENCE"
	CorruptInvalidTransition  = "INVALID_TRANSITION"
	CorruptInvalidTranscript  = "INVALID_TRANSCRIPT"
)

// Corruption says why committed (or candidate) bytes are not a valid
// session: Code is one of the Corrupt* codes, Line the 1-based line (0 when
// a candidate transaction was checked outside a file), Seq the seq of the
// offending fact (0 when there is none or it could not be read). Detail is
// a one-line explanation for humans; it is not part of the printed result.
type Corruption struct {
	Code   string
	Line   int
	Seq    int64
	Detail string
}

func (c *Corruption) Error() string { return "session corrupt: " + c.Describe() }

// Describe is "CODE at line N (seq S): detail", the seq and detail only
// when known.
func (c *Corruption) Describe() string {
	s := fmt.Sprintf("%s at line %d", c.Code, c.Line)
	if c.Seq > 0 {
		s += fmt.Sprintf(" (seq %d)", c.Seq)
	}
	if c.Detail != "" {
		s += ": " + c.Detail
	}
	return s
}

func corrupt(code string, seq int64, format string, args ...any) *Corruption {
	return &Corruption{Code: code, Seq: seq, Detail: fmt.Sprintf(format, args...)}
}
