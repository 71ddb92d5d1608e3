package session

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/go-json-experiment/json"
)

// DecodeTransaction decodes one transaction line (without its LF) into
// its facts. Framing faults come first (CRLF_NOT_ALLOWED, BLANK_LINE,
// INVALID_UTF8), then MALFORMED_JSON for text that is not one strict JSON
// value, EMPTY_TRANSACTION for [], and INVALID_FACT for a value that is
// not a transaction of session.schema.json (or a usage fact without
// exactly one owner, or an abortRequested with a toolCallId outside phase
// tool). The Corruption's Line is 0; Seq is the offending fact's seq when
// it can be read.
func DecodeTransaction(line []byte) ([]Fact, *Corruption) {
	var d txDecoder
	return d.decode(line)
}

// txDecoder decodes transaction lines, reusing its jsontext decoder
// between lines. It is not safe for concurrent use.
type txDecoder struct {
	rd reader
	// factBuf backs the returned facts; a decoder reused for many lines
	// (the reducer's) hands out the same array each time, so its callers
	// must be done with one line's facts before decoding the next.
	factBuf []Fact

	// With caching on (the reducer's decoder), repeated strings are
	// interned and a configuration snapshot byte-identical to the
	// previous one is not decoded again.
	sub     *txDecoder
	snapOK  bool
	snapRaw []byte
	snapVal ConfigurationSnapshot

	rw recordWire // the record being decoded (see record)
	ew entryWire  // the entry being decoded (see entry)

	// hist is the reducer's list of history entry ids before the line,
	// which a compactionStarted's partition repeats (see uuidsLike);
	// histKeys, when it is as long, has their keys, which compare without
	// reading the ids' text wherever it lies.
	hist     []string
	histKeys []idKey
}

// enableCache turns on interning, the string arena and the snapshot
// cache.
func (d *txDecoder) enableCache() {
	d.rd.strs = make(map[string]string)
	d.rd.arena, d.rd.ids = &strArena{}, &strArena{}
}

// cachedSnapshot reads a configuration snapshot, reusing the previous
// one when the bytes are the same.
func (d *txDecoder) cachedSnapshot() (ConfigurationSnapshot, error) {
	if d.rd.strs == nil || d.rd.kind() != '{' {
		return d.snapshot()
	}
	// The cached bytes are one complete object, which ends where its
	// text does: when the line goes on with them, the value is them, and
	// it was checked when it was cached.
	if rest := d.rd.buf[d.rd.pos:]; d.snapOK && bytes.HasPrefix(rest, d.snapRaw) {
		d.rd.pos += len(d.snapRaw)
		return d.snapVal, nil
	}
	v, err := d.rd.rawValue()
	if err != nil {
		return ConfigurationSnapshot{}, err
	}
	if d.snapOK && bytes.Equal(v, d.snapRaw) {
		return d.snapVal, nil
	}
	if d.sub == nil {
		d.sub = &txDecoder{}
		d.sub.rd.strs, d.sub.rd.arena, d.sub.rd.ids = d.rd.strs, d.rd.arena, d.rd.ids
	}
	d.sub.rd.reset(v, true) // rawValue has checked it, or it was validated with its line
	c, err := d.sub.snapshot()
	if err == nil {
		err = d.sub.rd.end()
	}
	if err == nil && d.sub.rd.dup {
		err = errDuplicateName
	}
	d.snapOK = err == nil
	if err != nil {
		return c, err
	}
	d.snapRaw = append(d.snapRaw[:0], v...)
	d.snapVal = c
	return c, nil
}

var errEmptyTransaction = errors.New("empty transaction")

func (d *txDecoder) decode(line []byte) ([]Fact, *Corruption) {
	if c := checkFraming(line); c != nil {
		return nil, c
	}
	facts, index, err := d.facts(line)
	if err == nil {
		return facts, nil
	}
	switch {
	case errors.Is(err, errSyntax):
		return nil, corrupt(CorruptMalformedJSON, 0, "%v", err)
	case errors.Is(err, errEmptyTransaction):
		return nil, corrupt(CorruptEmptyTransaction, 0, "a transaction must hold at least one fact")
	}
	return nil, corrupt(CorruptInvalidFact, seqOf(line, index), "%v", err)
}

// facts decodes the line; on error index is the failing fact's position.
// The strict reader decodes valid lines in one pass; any error sends the
// line to jsontext and then to a trusted reader, which have the last word
// (see strictjson.go).
func (d *txDecoder) facts(line []byte) (_ []Fact, index int, _ error) {
	d.rd.reset(line, false)
	if facts, _, err := d.walk(); err == nil && !d.rd.dup {
		return facts, 0, nil
	}
	return d.factsTrusted(line)
}

// factsTrusted decodes the line the slow way: jsontext validates it, then
// a trusted reader decodes it.
func (d *txDecoder) factsTrusted(line []byte) (_ []Fact, index int, _ error) {
	if err := d.rd.load(line); err != nil {
		return nil, 0, err
	}
	return d.walk()
}

// walk decodes the transaction in the reader.
func (d *txDecoder) walk() (_ []Fact, index int, _ error) {
	rd := &d.rd
	switch rd.kind() {
	case '{':
		f, err := d.fact()
		if err != nil {
			return nil, 0, err
		}
		facts := append(d.factBuf[:0], f)
		d.factBuf = facts
		return facts, 0, rd.end()
	case '[':
		facts := d.factBuf[:0]
		err := rd.elements("a transaction", func() error {
			f, err := d.fact()
			if err != nil {
				return err
			}
			facts = append(facts, f)
			return nil
		})
		if err != nil {
			return nil, len(facts), err
		}
		d.factBuf = facts
		if err := rd.end(); err != nil {
			return nil, 0, err
		}
		if len(facts) == 0 {
			return nil, 0, errEmptyTransaction
		}
		return facts, 0, nil
	}
	if err := rd.skip(); err != nil {
		return nil, 0, err
	}
	return nil, 0, shapeErr("a transaction must be a fact object or an array of facts")
}

// seqOf digs the seq of the index-th fact out of a line whose typed
// decoding failed, for the Corruption report (slow path only).
func seqOf(line []byte, index int) int64 {
	var v any
	if json.Unmarshal(line, &v) != nil {
		return 0
	}
	if arr, ok := v.([]any); ok {
		if index >= len(arr) {
			return 0
		}
		v = arr[index]
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return 0
	}
	seq, ok := obj["seq"].(float64)
	if !ok || seq < 1 || seq > maxSafeInteger || seq != math.Trunc(seq) {
		return 0
	}
	return int64(seq)
}

// Members of a fact object.
const (
	fKind = 1 << iota
	fSeq
	fID
	fTimestamp
	fEntry
	fRecord
	fOperationID
	fAttemptID
	fToolStartedID
	fUsage

	fBase = fKind | fSeq | fID | fTimestamp
)

func (d *txDecoder) fact() (Fact, error) {
	rd := &d.rd
	var (
		f    Fact
		have uint
		kind string
		u    UsageFact
	)
	err := rd.members("a fact", func(name []byte) (err error) {
		switch string(name) {
		case "kind":
			member(rd, &have, fKind)
			kind, err = rd.sym("kind")
		case "seq":
			member(rd, &have, fSeq)
			f.Seq, err = rd.safeInt("seq")
			if err == nil && f.Seq == 0 {
				err = shapeErr("seq must be at least 1")
			}
		case "id":
			member(rd, &have, fID)
			f.ID, err = rd.uuid("id")
		case "timestamp":
			member(rd, &have, fTimestamp)
			f.Timestamp, err = rd.safeInt("timestamp")
		case "entry":
			member(rd, &have, fEntry)
			f.Entry, err = d.entry()
		case "record":
			member(rd, &have, fRecord)
			f.Record, err = d.record()
		case "operationId":
			member(rd, &have, fOperationID)
			u.OperationID, err = rd.uuid("operationId")
		case "attemptId":
			member(rd, &have, fAttemptID)
			u.AttemptID, err = rd.uuid("attemptId")
		case "toolStartedId":
			member(rd, &have, fToolStartedID)
			u.ToolStartedID, err = rd.uuid("toolStartedId")
		case "usage":
			member(rd, &have, fUsage)
			u.Usage, err = d.usage()
		default:
			return shapeErr(fmt.Sprintf("unknown fact member %q", name))
		}
		return err
	})
	if err != nil {
		return f, err
	}
	switch kind {
	case string(KindEntry):
		if have != fBase|fEntry {
			return f, shapeErr("an entry fact has exactly kind, seq, id, timestamp and entry")
		}
	case string(KindRecord):
		if have != fBase|fRecord {
			return f, shapeErr("a record fact has exactly kind, seq, id, timestamp and record")
		}
	case string(KindUsage):
		owners := have & (fAttemptID | fToolStartedID)
		if have&^owners != fBase|fOperationID|fUsage {
			return f, shapeErr("a usage fact has exactly kind, seq, id, timestamp, operationId, usage and one owner")
		}
		if owners != fAttemptID && owners != fToolStartedID {
			return f, shapeErr("a usage fact has exactly one owner: attemptId or toolStartedId")
		}
		f.Usage = new(UsageFact) // (&u would put u on the heap for every fact)
		*f.Usage = u
	default:
		return f, shapeErr(fmt.Sprintf("unknown fact kind %q", kind))
	}
	return f, nil
}

func (d *txDecoder) usage() (Usage, error) {
	rd := &d.rd
	var (
		u    Usage
		have uint
	)
	err := rd.members("usage", func(name []byte) (err error) {
		var p *int64
		switch string(name) {
		case "input":
			member(rd, &have, 1)
			p = &u.Input
		case "output":
			member(rd, &have, 2)
			p = &u.Output
		case "cacheRead":
			member(rd, &have, 4)
			p = &u.CacheRead
		case "cacheWrite":
			member(rd, &have, 8)
			p = &u.CacheWrite
		default:
			return shapeErr(fmt.Sprintf("unknown usage member %q", name))
		}
		*p, err = rd.safeInt("a usage counter")
		return err
	})
	if err != nil {
		return u, err
	}
	if have != 15 {
		return u, shapeErr("usage has exactly input, output, cacheRead and cacheWrite")
	}
	return u, nil
}

// uuidsLike reads a non-nil array of UUIDv7 strings that is expected to
// repeat expect (a compaction's partition of the history ids the reducer
// holds; nil when unknown): while it does, no id is copied and the result
// shares expect's array. Each
// compactionStarted lists every message entry of the session, so this
// keeps loading from allocating the history again at each compaction.
func (d *txDecoder) uuidsLike(what string, expect []string, keys []idKey) ([]string, error) {
	rd := &d.rd
	var ids []string // nil while the elements are expect[:n]
	n := 0
	err := rd.elements(what, func() error {
		if ids == nil {
			// A valid UUID is exactly its 36 characters between quotes
			// (see uuid), so matching those bytes reads the same id.
			if n < len(expect) && rd.kind() == '"' && len(rd.buf)-rd.pos >= 38 && rd.buf[rd.pos+37] == '"' &&
				d.sameID(rd.buf[rd.pos+1:rd.pos+37], expect, keys, n) {
				rd.pos += 38
				n++
				return nil
			}
			ids = append(make([]string, 0, n+16), expect[:n]...)
		}
		id, err := rd.uuid(what + " element")
		if err != nil {
			return err
		}
		ids = append(ids, id)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if ids == nil {
		if n == 0 {
			return []string{}, nil
		}
		return expect[:n:n], nil
	}
	return ids, nil
}

// sameID reports whether b is expect[n], by key when keys are given.
func (d *txDecoder) sameID(b []byte, expect []string, keys []idKey, n int) bool {
	if keys != nil {
		k, ok := uuidKey(unsafe.String(&b[0], len(b)))
		return ok && k == keys[n]
	}
	return string(b) == expect[n]
}

// errorInfo reads {code, message}, both non-empty.
func (d *txDecoder) errorInfo() (ErrorInfo, error) {
	rd := &d.rd
	var (
		e    ErrorInfo
		have uint
	)
	err := rd.members("error", func(name []byte) (err error) {
		switch string(name) {
		case "code":
			member(rd, &have, 1)
			e.Code, err = rd.interned("error code")
		case "message":
			member(rd, &have, 2)
			e.Message, err = rd.nonEmpty("error message")
		default:
			return shapeErr(fmt.Sprintf("unknown error member %q", name))
		}
		return err
	})
	if err != nil {
		return e, err
	}
	if have != 3 {
		return e, shapeErr("error has exactly code and message")
	}
	return e, nil
}

// forget drops the decoder's references to the last line it read, which
// may lie in a mapping its caller is about to unmap.
func (d *txDecoder) forget() {
	d.rd.buf = nil
	if d.sub != nil {
		d.sub.rd.buf = nil
	}
}
