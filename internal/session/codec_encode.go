package session

import (
	"fmt"
)

// EncodeTransaction returns the committed line of a transaction,
// LF-terminated: one fact is written as a single object, several as an
// array. The facts must be complete (Seq, ID and Timestamp assigned). The
// line is checked by decoding it again, so whatever EncodeTransaction
// returns, DecodeTransaction accepts; a fact of the wrong shape is an error
// wrapping a *Corruption with code INVALID_FACT (or EMPTY_TRANSACTION for
// no facts). It does not check the facts against a session's state: that
// is Reducer.Check.
func EncodeTransaction(tx []Fact) ([]byte, error) {
	if len(tx) == 0 {
		return nil, fmt.Errorf("encode transaction: %w", corrupt(CorruptEmptyTransaction, 0, "no facts"))
	}
	b := make([]byte, 0, 512*len(tx))
	if len(tx) > 1 {
		b = append(b, '[')
	}
	for i := range tx {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendFact(b, &tx[i]); err != nil {
			return nil, fmt.Errorf("encode transaction: %w", corrupt(CorruptInvalidFact, tx[i].Seq, "%v", err))
		}
	}
	if len(tx) > 1 {
		b = append(b, ']')
	}
	if _, c := DecodeTransaction(b); c != nil {
		return nil, fmt.Errorf("encode transaction: %w", c)
	}
	return append(b, '\n'), nil
}

// appendFact appends one fact object.
func appendFact(b []byte, f *Fact) ([]byte, error) {
	set := 0
	if f.Entry != nil {
		set++
	}
	if f.Record != nil {
		set++
	}
	if f.Usage != nil {
		set++
	}
	if set != 1 || nilPayload(f) {
		return b, fmt.Errorf("fact %s must carry exactly one of Entry, Record and Usage", f.ID)
	}
	b = append(b, '{')
	var err error
	switch {
	case f.Entry != nil:
		b = appendMember(b, true, "entry")
		if b, err = appendEntry(b, f.Entry); err != nil {
			return b, err
		}
		b = appendStringMember(b, false, "id", f.ID)
		b = appendStringMember(b, false, "kind", string(KindEntry))
	case f.Record != nil:
		b = appendStringMember(b, true, "id", f.ID)
		b = appendStringMember(b, false, "kind", string(KindRecord))
		b = appendMember(b, false, "record")
		if b, err = appendRecord(b, f.Record); err != nil {
			return b, err
		}
	default:
		u := f.Usage
		first := true
		if u.AttemptID != "" {
			b = appendStringMember(b, true, "attemptId", u.AttemptID)
			first = false
		}
		b = appendStringMember(b, first, "id", f.ID)
		b = appendStringMember(b, false, "kind", string(KindUsage))
		b = appendStringMember(b, false, "operationId", u.OperationID)
	}
	b = appendIntMember(b, false, "seq", f.Seq)
	b = appendIntMember(b, false, "timestamp", f.Timestamp)
	if u := f.Usage; u != nil {
		if u.ToolStartedID != "" {
			b = appendStringMember(b, false, "toolStartedId", u.ToolStartedID)
		}
		b = appendMember(b, false, "usage")
		b = append(b, '{')
		b = appendIntMember(b, true, "cacheRead", u.Usage.CacheRead)
		b = appendIntMember(b, false, "cacheWrite", u.Usage.CacheWrite)
		b = appendIntMember(b, false, "input", u.Usage.Input)
		b = appendIntMember(b, false, "output", u.Usage.Output)
		b = append(b, '}')
	}
	return append(b, '}'), nil
}

func appendSyntheticResult(b []byte, reason string) []byte {
	b = append(b, '{')
	b = appendStringMember(b, true, "reason", reason)
	b = appendStringMember(b, false, "type", "synthetic")
	return append(b, '}')
}

func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	return append(b, ']')
}

func appendError(b []byte, e *ErrorInfo) []byte {
	b = append(b, '{')
	b = appendStringMember(b, true, "code", e.Code)
	b = appendStringMember(b, false, "message", e.Message)
	return append(b, '}')
}
