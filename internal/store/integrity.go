package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/statekey"
)

// IntegrityFile is the sidecar file (<session>.d/integrity) in which the
// store keeps, for each of its commits, the committed length and the
// SHA-256 of the committed prefix: "<length> <hex digest>\n". The shared
// format cannot carry it (no new fact type or header field), and a running
// digest is what tells a session rewritten in place (same length) or cut
// at a line boundary from the one tiny-go committed.
const IntegrityFile = "integrity"

// Codes of the corruptions the integrity records find; they are tiny-go's
// own, beside the shared format's (session.Corrupt*).
const (
	// CorruptDigestMismatch: a committed line is not what was committed.
	CorruptDigestMismatch = "DIGEST_MISMATCH"
	// CorruptTruncated: the file is shorter than what was committed.
	CorruptTruncated = "TRUNCATED"
	// CorruptTampered: a run stopped because another program wrote the
	// file (TamperedFile); only a repair lets the session go on.
	CorruptTampered = "TAMPERED"
	// CorruptUnsealed: tiny-go sealed the session's integrity records,
	// and they are gone or replaced by records without its seal.
	CorruptUnsealed = "UNSEALED"
)

// ledger is the store's account of what it committed: a running SHA-256
// of the committed bytes, the integrity records file, and the file's
// identity as the store left it after its last write.
type ledger struct {
	hash  hash.Hash // over the committed bytes [0, size)
	file  *os.File  // <session>.d/integrity; opened at the first commit
	stamp stamp
	off   bool // no sidecar directory: no records are kept
	// pending is the record of the header of a new session, written
	// with the first commit's (a session that never gets one leaves no
	// sidecar behind).
	pending []byte
	// warning is one line for the user about the records found at open.
	warning string
	name    string // the session file's name, for its mark
	marked  bool   // the mark beside the key is written
	last    int64  // the length of the last record written
}

// stamp is what an fstat says about the session file. Anything that
// writes the file changes its ctime (fine-grained on Linux 6.13+ once a
// stat has looked at it, which the store does after each of its writes),
// so an unchanged stamp means nobody else wrote it.
type stamp struct {
	dev, ino     uint64
	size         int64
	mtime, ctime unix.Timespec
}

func stampOf(st *unix.Stat_t) stamp {
	return stamp{dev: uint64(st.Dev), ino: st.Ino, size: st.Size, mtime: st.Mtim, ctime: st.Ctim}
}

// record is one line of the integrity file.
type record struct {
	size   int64
	digest [sha256.Size]byte
}

// line is the record sealed with tiny-go's key: "<length> <digest> <mac>".
// Without a key (none could be made) the record goes unsealed, and the
// next open says so.
func (r record) line() []byte {
	b := strconv.AppendInt(make([]byte, 0, 24+4*sha256.Size), r.size, 10)
	b = append(b, ' ')
	b = hex.AppendEncode(b, r.digest[:])
	if mac, err := r.mac(); err == nil {
		b = append(b, ' ')
		b = hex.AppendEncode(b, mac)
	}
	return append(b, '\n')
}

func (r record) mac() ([]byte, error) {
	return statekey.Sum(integrityPurpose, []byte(strconv.FormatInt(r.size, 10)), r.digest[:])
}

const integrityPurpose = "session-integrity"

// sealedKind names the marks of sessions whose records tiny-go sealed.
const sealedKind = "sealed-sessions"

// ErrUnsealedRecords: integrity records without tiny-go's seal (written
// before records were keyed, or by another program) vouch for nothing.
type UnsealedRecordsError struct{ N int }

func (e *UnsealedRecordsError) Error() string {
	return fmt.Sprintf("%d integrity record(s) carry no seal of tiny-go's key (written before records were keyed, or by another program): they were not trusted, and the session was taken as it is", e.N)
}

// parseRecords reads the integrity file: the sealed records, and how many
// lines carry no seal (left out: they vouch for nothing). A torn last
// line (a crash mid-write) is left out; any other malformed line, or a
// seal that does not match, is an error.
func parseRecords(data []byte) (recs []record, unsealed int, err error) {
	for len(data) > 0 {
		line, rest, ok := bytes.Cut(data, []byte{'\n'})
		if !ok {
			break
		}
		data = rest
		num, dig, ok := bytes.Cut(line, []byte{' '})
		dig, mac, sealed := bytes.Cut(dig, []byte{' '})
		n, err := strconv.ParseInt(string(num), 10, 64)
		var r record
		if !ok || err != nil || n <= 0 || hex.DecodedLen(len(dig)) != sha256.Size {
			return nil, 0, fmt.Errorf("malformed integrity record %q", line)
		}
		if _, err := hex.Decode(r.digest[:], dig); err != nil {
			return nil, 0, fmt.Errorf("malformed integrity record %q", line)
		}
		r.size = n
		if !sealed {
			unsealed++
			continue
		}
		if good, err := statekey.Check(string(mac), integrityPurpose, []byte(strconv.FormatInt(n, 10)), r.digest[:]); err != nil {
			return nil, 0, err
		} else if !good {
			return nil, 0, fmt.Errorf("the integrity record for %d bytes is not sealed with tiny-go's key (forged)", n)
		}
		if len(recs) > 0 && n <= recs[len(recs)-1].size {
			return nil, 0, fmt.Errorf("integrity records go back (%d after %d)", n, recs[len(recs)-1].size)
		}
		recs = append(recs, r)
	}
	return recs, unsealed, nil
}

// Verify checks the committed bytes of a session (data[:committed]) against
// its integrity records (the content of IntegrityFile, nil when there is
// none). It returns the first difference as a corruption naming its line:
// a committed line that changed (DIGEST_MISMATCH), or a file shorter than
// what was committed (TRUNCATED). verified is the length of the prefix the
// records vouch for; bytes after it were written by someone else (another
// runtime continuing the session, or anything else) and are vouched for by
// the reducer alone.
func Verify(data []byte, committed int64, records []byte) (verified int64, c *session.Corruption) {
	return verifyAt(bytes.NewReader(data), committed, records)
}

// verifyAt is Verify over the committed bytes of src, read as they are
// hashed (the file is never held whole).
func verifyAt(src io.ReaderAt, committed int64, records []byte) (verified int64, c *session.Corruption) {
	recs, _, err := parseRecords(records)
	if err != nil {
		return 0, &session.Corruption{Code: CorruptDigestMismatch, Line: 1, Detail: IntegrityFile + ": " + err.Error()}
	}
	h := sha256.New()
	var pos int64
	for _, r := range recs {
		if r.size > committed {
			return pos, &session.Corruption{Code: CorruptTruncated, Line: lineAtReader(src, committed),
				Detail: fmt.Sprintf("the file has %d committed bytes, but %d were committed by tiny-go: lines were cut off the end", committed, r.size)}
		}
		var last [1]byte
		_, err := io.Copy(h, io.NewSectionReader(src, pos, r.size-pos))
		if err == nil && r.size > 0 {
			_, err = src.ReadAt(last[:], r.size-1)
		}
		var sum [sha256.Size]byte
		h.Sum(sum[:0])
		if err != nil || sum != r.digest || last[0] != '\n' {
			return pos, &session.Corruption{Code: CorruptDigestMismatch, Line: lineAtReader(src, pos),
				Detail: fmt.Sprintf("bytes %d to %d are not what tiny-go committed (changed by another program); `tiny-go session repair` cuts the session back to its last verified commit", pos, r.size)}
		}
		pos = r.size
	}
	return pos, nil
}

// lineAt is the 1-based number of the line that starts at or contains
// byte off.
func lineAt(data []byte, off int64) int {
	off = min(off, int64(len(data)))
	return bytes.Count(data[:off], []byte{'\n'}) + 1
}

// lineAtReader is lineAt over src, read in chunks.
func lineAtReader(src io.ReaderAt, off int64) int {
	n := 1
	buf := make([]byte, 64<<10)
	for pos := int64(0); pos < off; {
		k, err := src.ReadAt(buf[:min(int64(len(buf)), off-pos)], pos)
		n += bytes.Count(buf[:k], []byte{'\n'})
		pos += int64(k)
		if err != nil || k == 0 {
			break
		}
	}
	return n
}

// IntegrityCheck verifies a session's committed bytes against its
// integrity records and tamper mark as they are read, in the same pass
// that reduces them (pass Line as session.ReadHooks.Line): the file is
// read, hashed and parsed once. A session outside a sessions directory
// has nothing to check against.
type IntegrityCheck struct {
	off     bool // no sidecar directory possible: nothing is checked
	records []byte
	recs    []record
	recErr  error // malformed records
	// unsealed counts records without a seal, left out.
	unsealed int
	// sealedMark: tiny-go sealed records of this session (the mark at
	// mark, beside the key), so it must have some.
	sealedMark bool
	sealedSize int64 // the length last sealed, as the mark says
	mark       string

	h         hash.Hash // over the lines so far
	pos       int64     // bytes hashed
	lines     int       // lines hashed
	headerLen int64

	next         int   // the first record not yet checked
	verified     int64 // the length the checked records vouch for
	verifiedLine int   // the line that starts at verified
	mismatch     bool  // recs[next] does not match

	tamper       int64 // the tamper mark's length, -1 without one
	tamperReason string
	tamperErr    error
	tamperLine   int // the line holding byte tamper
}

// NewIntegrityCheck reads the integrity records and tamper mark of the
// session at path.
func NewIntegrityCheck(path string) (*IntegrityCheck, error) {
	if _, err := SidecarDir(path, false); err != nil && !errors.Is(err, os.ErrNotExist) {
		// A file outside a sessions directory (OpenFile) has no sidecar.
		k := newIntegrityCheck(nil)
		k.off = true
		return k, nil
	}
	records, err := ReadSidecarFile(path, IntegrityFile)
	if err != nil {
		return nil, err
	}
	k := newIntegrityCheck(records)
	var sealed []byte
	sealed, k.sealedMark, k.mark = statekey.Marked(sealedKind, filepath.Base(path))
	k.sealedSize, _ = strconv.ParseInt(string(sealed), 10, 64)
	k.tamper, k.tamperReason, k.tamperErr = readTampered(path)
	if k.tamperErr != nil {
		k.tamper = -1
	}
	return k, nil
}

// newIntegrityCheck checks against the content of IntegrityFile (nil when
// there is none), without a tamper mark.
func newIntegrityCheck(records []byte) *IntegrityCheck {
	k := &IntegrityCheck{h: sha256.New(), tamper: -1, tamperLine: 1, verifiedLine: 1, records: records}
	k.recs, k.unsealed, k.recErr = parseRecords(records)
	return k
}

// Line takes the next committed line of the file, with its LF.
func (k *IntegrityCheck) Line(b []byte) {
	k.h.Write(b)
	if k.lines == 0 {
		k.headerLen = int64(len(b))
	}
	k.pos += int64(len(b))
	k.lines++
	if k.tamper >= 0 && k.pos <= k.tamper {
		k.tamperLine++
	}
	for !k.mismatch && k.recErr == nil && k.next < len(k.recs) && k.recs[k.next].size <= k.pos {
		r := k.recs[k.next]
		var sum [sha256.Size]byte
		if r.size == k.pos {
			k.h.Sum(sum[:0])
		}
		// A record inside a line cannot match: records end at an LF.
		if r.size != k.pos || sum != r.digest {
			k.mismatch = true
			return
		}
		k.verified, k.verifiedLine = r.size, k.lines+1
		k.next++
	}
}

// Result says whether the lines passed to Line, the session's committed
// bytes, are what tiny-go committed: nil, or the first difference as a
// corruption naming its line (DIGEST_MISMATCH, TRUNCATED, TAMPERED).
func (k *IntegrityCheck) Result() (*session.Corruption, error) {
	switch {
	case k.off:
		return nil, nil
	case k.recErr != nil:
		return &session.Corruption{Code: CorruptDigestMismatch, Line: 1, Detail: IntegrityFile + ": " + k.recErr.Error()}, nil
	case k.mismatch:
		return &session.Corruption{Code: CorruptDigestMismatch, Line: k.verifiedLine,
			Detail: fmt.Sprintf("bytes %d to %d are not what tiny-go committed (changed by another program); `tiny-go session repair` cuts the session back to its last verified commit", k.verified, k.recs[k.next].size)}, nil
	case k.sealedMark && len(k.recs) == 0 && k.pos > 0:
		return &session.Corruption{Code: CorruptUnsealed, Line: 1,
			Detail: "tiny-go sealed this session's integrity records, and they are gone or replaced by unsealed ones (forged): it is not taken as it is; if you removed them yourself, remove " + k.mark}, nil
	case k.sealedMark && (len(k.recs) == 0 || k.recs[len(k.recs)-1].size < k.sealedSize):
		return &session.Corruption{Code: CorruptUnsealed, Line: 1,
			Detail: fmt.Sprintf("tiny-go sealed integrity records for %d bytes of this session, and they were cut back: it is not taken as it is; if you removed them yourself, remove %s", k.sealedSize, k.mark)}, nil
	case k.next < len(k.recs):
		return &session.Corruption{Code: CorruptTruncated, Line: k.lines + 1,
			Detail: fmt.Sprintf("the file has %d committed bytes, but %d were committed by tiny-go: lines were cut off the end", k.pos, k.recs[k.next].size)}, nil
	case k.tamperErr != nil:
		return nil, k.tamperErr
	case k.tamper >= 0:
		return &session.Corruption{Code: CorruptTampered, Line: k.tamperLine,
			Detail: "tiny-go stopped because the file " + k.tamperReason + "; `tiny-go session repair` cuts it back to what tiny-go committed"}, nil
	}
	return nil, nil
}

// ledger checks the result and returns the ledger the store goes on
// with, its hash over the committed bytes (all the lines passed). A
// session that has no records yet (created by another runtime, forked, or
// older than them) is adopted as it is; so are lines appended after the
// last record.
func (k *IntegrityCheck) ledger(path string) (*ledger, error) {
	l := &ledger{hash: k.h, off: k.off}
	if k.off {
		return l, nil
	}
	c, err := k.Result()
	if err != nil {
		return nil, err
	}
	if c != nil {
		return nil, &CorruptError{Path: path, Corruption: c}
	}
	if k.unsealed > 0 {
		// Said once: the unsealed lines go, what is there is sealed.
		l.warning = fmt.Sprintf("session %s: %v", sessionName(path), &UnsealedRecordsError{N: k.unsealed})
		if err := dropUnsealed(path, k.recs); err != nil {
			return nil, err
		}
	}
	if k.pos > k.verified && (k.records != nil || k.pos > k.headerLen) {
		// Adopt what came after (the reducer accepted it); record it so
		// a later change of it is seen too.
		if err := l.append(path, k.pos); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// newLedger is the ledger of a session created with the header line.
func newLedger(header []byte) *ledger {
	l := &ledger{hash: sha256.New()}
	l.hash.Write(header)
	r := record{size: int64(len(header))}
	l.hash.Sum(r.digest[:0])
	l.pending = r.line()
	return l
}

// append writes the record of the committed length size (the running
// hash covers exactly size bytes). The record follows its line: a crash
// in between leaves a line without record, adopted on the next open, never
// a record without its line.
func (l *ledger) append(sessionPath string, size int64) error {
	if l.off {
		return nil
	}
	if l.file == nil {
		dir, err := SidecarDir(sessionPath, true)
		if err != nil {
			return fmt.Errorf("integrity records: %w", err)
		}
		f, err := OpenSidecarFile(dir, IntegrityFile, os.O_RDWR|os.O_CREATE|os.O_APPEND)
		if err != nil {
			return fmt.Errorf("integrity records: %w", err)
		}
		if err := cutTornRecord(f); err != nil {
			f.Close()
			return fmt.Errorf("integrity records: %w", err)
		}
		l.file = f
		l.name = filepath.Base(sessionPath)
	}
	var lines []byte
	if l.pending != nil {
		lines = append(lines, l.pending...)
	}
	r := record{size: size}
	l.hash.Sum(r.digest[:0])
	lines = append(lines, r.line()...)
	if err := writeWhole(l.file, lines); err != nil {
		return fmt.Errorf("integrity records: %w", err)
	}
	l.pending = nil
	if !l.marked {
		// Beside the key, once a record is there: these records can no
		// longer go unnoticed. Marked before (a full disk failing the
		// record), the session read as forged and never opened again.
		if err := statekey.Mark(sealedKind, l.name, nil); err != nil {
			return fmt.Errorf("integrity records: %w", err)
		}
		l.marked = true
	}
	l.last = size
	return nil
}

// writeWhole appends b to f, or nothing: a write that a full disk cut
// short is cut off again, so the next record does not glue to a torn one
// (a malformed line, which refuses the session).
func writeWhole(f *os.File, b []byte) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if n, err := f.Write(b); err != nil {
		if n > 0 {
			_ = f.Truncate(fi.Size())
		}
		return err
	}
	return nil
}

// cutTornRecord removes a last line without LF (a crash mid-write), so
// the next record starts on a line of its own.
func cutTornRecord(f *os.File) error {
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return err
	}
	size := fi.Size()
	// Records are short; the last LF is within the last 200 bytes.
	off := max(0, size-200)
	tail := make([]byte, size-off)
	if _, err := f.ReadAt(tail, off); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if tail[len(tail)-1] == '\n' {
		return nil
	}
	keep := off + int64(bytes.LastIndexByte(tail, '\n')+1)
	return f.Truncate(keep)
}

func (l *ledger) close() error {
	if l == nil || l.file == nil {
		return nil
	}
	// Once per run, not per commit: the mark lags after a crash, which
	// only protects less.
	if l.last > 0 {
		_ = statekey.Mark(sealedKind, l.name, []byte(strconv.FormatInt(l.last, 10)))
	}
	return l.file.Close()
}

// firstChange re-reads the committed bytes and names the first line that
// is not what this store committed, or returns "" when they all are (the
// file was only touched: its times changed, its bytes did not). Only
// called when the stamp changed, so its cost (a read of the file) is paid
// only then.
func (s *Store) firstChange() (string, error) {
	data := make([]byte, s.size)
	if _, err := s.file.ReadAt(data, 0); err != nil {
		if errors.Is(err, io.EOF) {
			return "was truncated", nil
		}
		return "", err
	}
	var sum, want [sha256.Size]byte
	h := sha256.New()
	h.Write(data)
	h.Sum(sum[:0])
	s.ledger.hash.Sum(want[:0])
	if sum == want {
		return "", nil
	}
	line := 1
	if s.ledger.file != nil {
		records := make([]byte, 0, 4096)
		if fi, err := s.ledger.file.Stat(); err == nil {
			records = make([]byte, fi.Size())
			n, _ := s.ledger.file.ReadAt(records, 0)
			records = records[:n]
		}
		if _, c := Verify(data, s.size, records); c != nil {
			line = c.Line
		}
	}
	return fmt.Sprintf("was rewritten in place: line %d is not what tiny-go committed", line), nil
}

// TamperedFile is the sidecar file a store leaves when it stopped because
// another program wrote the session: "<committed length> <reason>\n". The
// session then opens only after `tiny-go session repair`, so whatever was
// written behind tiny-go's back (even a valid-looking line) is never
// adopted as its own.
const TamperedFile = "tampered"

// markTampered leaves the TamperedFile of e; best effort (the error that
// stops the run is reported either way).
func (s *Store) markTampered(e *TamperedError) {
	dir, err := SidecarDir(s.path, true)
	if err != nil {
		return
	}
	f, err := OpenSidecarFile(dir, TamperedFile, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
	if err != nil {
		return
	}
	fmt.Fprintf(f, "%d %s\n", s.size, e.Reason)
	f.Close()
}

// readTampered returns the committed length a TamperedFile records, or -1
// when there is none.
func readTampered(sessionPath string) (size int64, reason string, err error) {
	data, err := ReadSidecarFile(sessionPath, TamperedFile)
	if err != nil || data == nil {
		return -1, "", err
	}
	num, rest, _ := bytes.Cut(bytes.TrimRight(data, "\n"), []byte{' '})
	size, perr := strconv.ParseInt(string(num), 10, 64)
	if perr != nil || size < 0 {
		return 0, "", fmt.Errorf("malformed %s file", TamperedFile)
	}
	return size, string(rest), nil
}
