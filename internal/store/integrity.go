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
	"time"

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

// Repaired says what RepairFile did.
type Repaired struct {
	Path string
	// Kept is the length of the verified prefix the file was cut to;
	// Removed the number of bytes cut, kept in Backup.
	Kept, Removed int64
	// FirstLine and LastLine number the removed lines.
	FirstLine, LastLine int
	Backup              string
	// Why names what was wrong.
	Why string
}

// ErrNothingToRepair is returned by RepairFile for a session that verifies.
var ErrNothingToRepair = errors.New("the session verifies; nothing to repair")

// RepairFile cuts the session at path back to its last verified commit:
// the longest prefix that its integrity records vouch for, that reduces,
// and that does not reach past a commit refused as tampered. The cut bytes
// are kept in <session>.d/repair-<time>.cut; the integrity records are cut
// to match and the tamper mark removed. A session cut short (TRUNCATED)
// cannot be repaired: the lost lines are gone, and resuming without them
// could run their effects again.
func RepairFile(path string, now time.Time) (*Repaired, error) {
	f, err := openNoFollow(path)
	if err != nil {
		return nil, fmt.Errorf("repair: %w", err)
	}
	defer f.Close()
	if err := lockFile(f, path); err != nil {
		return nil, err
	}
	// The file is read in sections, never held whole: the records are
	// checked as it is hashed, the unverified rest is reduced as it is
	// read, and the cut part is copied to the backup.
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("repair: %w", err)
	}
	size := fi.Size()
	records, err := ReadSidecarFile(path, IntegrityFile)
	if err != nil {
		return nil, fmt.Errorf("repair: %w", err)
	}
	committed, keep, why, err := repairCut(f, path, size, records)
	if err != nil {
		return nil, err
	}
	r := &Repaired{Path: path, Kept: keep, Removed: size - keep, Why: why,
		FirstLine: lineAtReader(f, keep), LastLine: lineAtReader(f, size) - 1}
	if committed < size {
		r.LastLine++ // the torn last line
	}
	dir, err := SidecarDir(path, true)
	if err != nil {
		return nil, fmt.Errorf("repair: %w", err)
	}
	if r.Removed > 0 {
		if r.Backup, err = backupCut(dir, f, keep, r.Removed, now); err != nil {
			return nil, fmt.Errorf("repair: backup: %w", err)
		}
	}
	if err := rewriteRecords(dir, f, records, keep); err != nil {
		return nil, fmt.Errorf("repair: %w", err)
	}
	// The records now end at keep: so does what the mark vouches for.
	if _, ok, _ := statekey.Marked(sealedKind, filepath.Base(path)); ok {
		if err := statekey.Mark(sealedKind, filepath.Base(path), []byte(strconv.FormatInt(keep, 10))); err != nil {
			return nil, fmt.Errorf("repair: %w", err)
		}
	}
	if err := f.Truncate(keep); err != nil {
		return nil, fmt.Errorf("repair: %w", err)
	}
	if err := f.Sync(); err != nil {
		return nil, fmt.Errorf("repair: %w", err)
	}
	if err := os.Remove(filepath.Join(dir, TamperedFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("repair: %w", err)
	}
	return r, nil
}

// repairCut decides how much of the file a repair keeps, and why the rest
// goes: committed is the end of its last complete line, keep what stays
// (ErrNothingToRepair when that is all of it).
func repairCut(f *os.File, path string, size int64, records []byte) (committed, keep int64, why string, err error) {
	// The last complete line bounds what can be kept.
	if committed, err = lastLineEnd(f, size); err != nil {
		return 0, 0, "", fmt.Errorf("repair: %w", err)
	}
	keep = committed
	if tsize, reason, err := readTampered(path); err != nil {
		return 0, 0, "", fmt.Errorf("repair: %w", err)
	} else if tsize >= 0 {
		why = "tiny-go stopped because the file " + reason
		keep = min(keep, tsize)
	}
	verified, c := verifyAt(f, keep, records)
	if c != nil {
		if c.Code == CorruptTruncated {
			return 0, 0, "", fmt.Errorf("repair: %s; the lost lines cannot be restored (resuming without them could run their effects again): start a new session or fork this one", c.Describe())
		}
		if why == "" {
			why = c.Describe()
		}
		keep = verified
	}
	// Whatever was appended unverified must still reduce.
	for {
		reduced, rc, err := reduceSection(f, keep)
		if err != nil {
			return 0, 0, "", fmt.Errorf("repair: %w", err)
		}
		if rc == nil {
			keep = min(keep, reduced)
			break
		}
		if why == "" {
			why = rc.Describe()
		}
		if keep, err = lineStart(f, rc.Line); err != nil {
			return 0, 0, "", fmt.Errorf("repair: %w", err)
		}
		if keep == 0 {
			return 0, 0, "", fmt.Errorf("repair: the header line is not valid (%s); nothing can be kept", rc.Describe())
		}
	}
	if keep == size && why == "" {
		return 0, 0, "", ErrNothingToRepair
	}
	if why == "" {
		why = "a torn last line"
	}
	return committed, keep, why, nil
}

// backupCut copies the removed bytes beside the session, synced, and
// returns the backup's path.
func backupCut(dir string, f *os.File, keep, removed int64, now time.Time) (string, error) {
	path := filepath.Join(dir, "repair-"+now.UTC().Format("20060102T150405.000Z")+".cut")
	b, err := OpenSidecarFile(dir, filepath.Base(path), os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return "", err
	}
	_, werr := io.Copy(b, io.NewSectionReader(f, keep, removed))
	if werr == nil {
		werr = b.Sync()
	}
	if cerr := b.Close(); werr == nil {
		werr = cerr
	}
	return path, werr
}

// rewriteRecords keeps the integrity records that vouch for at most keep
// bytes and adds one for keep itself. Records go first: records that
// vouch for less than the file are harmless (adopted), the other way
// round is a TRUNCATED session.
func rewriteRecords(dir string, f *os.File, records []byte, keep int64) error {
	recs, _, _ := parseRecords(records)
	var out []byte
	for _, rec := range recs {
		if rec.size <= keep {
			out = append(out, rec.line()...)
		}
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, keep)); err != nil {
		return err
	}
	last := record{size: keep}
	h.Sum(last.digest[:0])
	if len(recs) == 0 || !bytes.HasSuffix(out, last.line()) {
		out = append(out, last.line()...)
	}
	return writeSidecarAtomically(dir, IntegrityFile, out)
}

// lineStart is the offset at which 1-based line n of src starts (its
// size if it has fewer lines), read in chunks.
func lineStart(src io.ReaderAt, n int) (int64, error) {
	buf := make([]byte, 64<<10)
	var pos int64
	for line := 1; line < n; {
		k, err := src.ReadAt(buf, pos)
		for i := 0; i < k && line < n; {
			j := bytes.IndexByte(buf[i:k], '\n')
			if j < 0 {
				break
			}
			i += j + 1
			line++
			if line == n {
				return pos + int64(i), nil
			}
		}
		pos += int64(k)
		if errors.Is(err, io.EOF) {
			return pos, nil
		}
		if err != nil {
			return 0, err
		}
	}
	return 0, nil
}

// lastLineEnd is the offset just after the last LF of the first size
// bytes of src (0 when there is none), read backwards in chunks.
func lastLineEnd(src io.ReaderAt, size int64) (int64, error) {
	buf := make([]byte, 64<<10)
	for end := size; end > 0; {
		start := max(0, end-int64(len(buf)))
		k, err := src.ReadAt(buf[:end-start], start)
		if err != nil && !(errors.Is(err, io.EOF) && int64(k) == end-start) {
			return 0, err
		}
		if i := bytes.LastIndexByte(buf[:k], '\n'); i >= 0 {
			return start + int64(i) + 1, nil
		}
		end = start
	}
	return 0, nil
}

// reduceSection reduces the first n bytes of the session in src, streamed,
// and returns the length through its final LF.
func reduceSection(src io.ReaderAt, n int64) (int64, *session.Corruption, error) {
	for _, lean := range []bool{true, false} {
		r, _, c, err := session.ReadSession(io.NewSectionReader(src, 0, n), n, session.ReadHooks{ReleaseCompacted: lean})
		if errors.Is(err, session.ErrReleasedTextNeeded) {
			continue
		}
		if err != nil || c != nil {
			return 0, c, err
		}
		return r.State().RepairedLength, nil, nil
	}
	panic("unreachable")
}

// writeSidecarAtomically replaces name in dir with data (temporary file,
// sync, rename).
func writeSidecarAtomically(dir, name string, data []byte) error {
	tmp := "." + name + ".tmp"
	if err := writeSidecarFile(dir, tmp, os.O_TRUNC, data); err != nil {
		return err
	}
	return os.Rename(filepath.Join(dir, tmp), filepath.Join(dir, name))
}

// dropUnsealed rewrites the integrity records with the sealed ones only.
func dropUnsealed(path string, recs []record) error {
	dir, err := SidecarDir(path, true)
	if err != nil {
		return fmt.Errorf("integrity records: %w", err)
	}
	var out []byte
	for _, r := range recs {
		out = append(out, r.line()...)
	}
	return writeSidecarAtomically(dir, IntegrityFile, out)
}
