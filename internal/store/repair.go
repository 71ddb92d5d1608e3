// Repairing a session file whose tail is torn or unsealed: cut it back to
// the last sealed record, keeping a backup of what was cut.

package store

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/statekey"
)

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
