//go:build linux && (amd64 || arm64)

package journal

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Restore puts the tree back as it was before the command of the journal
// in dir, undoing its records in reverse order. Every step sets a state
// rather than applying a difference, and the records undone are counted,
// so a Restore cut short (a SIGKILL anywhere) and run again ends with the
// same tree. A torn last line is a change that was never let go on, and is
// skipped.
func Restore(dir string) error {
	marker := filepath.Join(dir, restoredName)
	if _, err := os.Stat(marker); err == nil {
		return dropData(dir)
	}
	recs, err := readLog(filepath.Join(dir, logName))
	if err != nil {
		return err
	}
	prog, err := openProgress(dir)
	if err != nil {
		return err
	}
	defer prog.Close()
	for i := len(recs) - 1 - prog.undone; i >= 0; i-- {
		hitRestoreStep(2 * i)
		if err := undo(dir, recs[i]); err != nil {
			return fmt.Errorf("journal: undo %s of %s: %w", recs[i].Op, recs[i].Path, err)
		}
		hitRestoreStep(2*i + 1)
		if err := prog.set(len(recs) - i); err != nil {
			return err
		}
	}
	// Marked done before the kept inodes go: their journal links would
	// count in the tree's link counts, and a second run must not need them.
	f, err := os.Create(marker)
	if err != nil {
		return fmt.Errorf("journal: mark the restore done: %w", err)
	}
	err = f.Sync()
	f.Close()
	if err != nil {
		return fmt.Errorf("journal: mark the restore done: %w", err)
	}
	return dropData(dir)
}

const restoredName = "restored"

func dropData(dir string) error {
	if err := os.RemoveAll(filepath.Join(dir, dataDir)); err != nil {
		return fmt.Errorf("journal: drop the kept pre-images: %w", err)
	}
	return nil
}

// progress counts the records undone, so a Restore run again goes on
// from the step it was in rather than from the last record: the names a
// record holds are those of its moment, right only when every later
// record is undone and no earlier one is.
type progress struct {
	f      *os.File
	undone int
}

func openProgress(dir string) (*progress, error) {
	f, err := os.OpenFile(filepath.Join(dir, progressName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal: open the restore's progress: %w", err)
	}
	var b [8]byte
	p := &progress{f: f}
	if n, _ := f.ReadAt(b[:], 0); n == 8 {
		p.undone = int(binary.LittleEndian.Uint64(b[:]))
	}
	return p, nil
}

func (p *progress) set(n int) error {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(n))
	if _, err := p.f.WriteAt(b[:], 0); err != nil {
		return fmt.Errorf("journal: write the restore's progress: %w", err)
	}
	if err := p.f.Sync(); err != nil {
		return fmt.Errorf("journal: sync the restore's progress: %w", err)
	}
	return nil
}

func (p *progress) Close() error { return p.f.Close() }

const progressName = "undone"

// hitRestoreStep is a test's hook to die between two steps.
var hitRestoreStep = func(int) {}

func readLog(path string) ([]record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("journal: open the log: %w", err)
	}
	defer f.Close()
	var recs []record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var r record
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			break // torn by a crash: never answered, so never done
		}
		recs = append(recs, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("journal: read the log: %w", err)
	}
	return recs, nil
}

func undo(dir string, r record) error {
	switch r.Op {
	case "file":
		var src io.Reader = bytes.NewReader(r.Inline)
		if r.Data != "" {
			f, err := os.Open(filepath.Join(dir, r.Data))
			if err != nil {
				return err
			}
			defer f.Close()
			src = f
		}
		if err := putContent(src, r.Path, r.Mode); err != nil {
			return err
		}
		return putMeta(r)
	case "len":
		if err := os.Truncate(r.Path, r.Size); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return putMeta(r)
	case "ranges":
		if err := putRanges(filepath.Join(dir, r.Data), r); err != nil {
			return err
		}
		return putMeta(r)
	case "absent":
		return os.RemoveAll(r.Path)
	case "gone":
		return relink(filepath.Join(dir, r.Data), r)
	case "rename":
		return unrename(r)
	case "exchange":
		if st, err := lstat(r.To); err == nil && st.Ino == r.Ino {
			return unix.Renameat2(unix.AT_FDCWD, r.Path, unix.AT_FDCWD, r.To, unix.RENAME_EXCHANGE)
		}
		return nil
	case "meta":
		return putMeta(r)
	}
	return fmt.Errorf("unknown record %q", r.Op)
}

// putContent writes the pre-image into the file in place (same inode, so
// its other names and outside holders see it), or makes it anew.
func putContent(in io.Reader, dst string, mode uint32) error {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fs.FileMode(mode&0o777)|0o200)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func relink(src string, r record) error {
	if _, err := lstat(r.Path); err == nil {
		return nil
	}
	if r.Mode&unix.S_IFMT == unix.S_IFDIR {
		if err := os.Rename(src, r.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if _, err := lstat(src); err != nil {
		return nil // moved back by an earlier run, and removed again since
	}
	if err := unix.Linkat(unix.AT_FDCWD, src, unix.AT_FDCWD, r.Path, 0); err != nil {
		if !errors.Is(err, unix.EXDEV) {
			return err
		}
		in, err := os.Open(src)
		if err != nil {
			return err
		}
		defer in.Close()
		if err := putContent(in, r.Path, r.Mode); err != nil {
			return err
		}
		return putMeta(r)
	}
	return nil
}

// unrename moves the inode back when it is still at the new name and the
// old name is free: done already otherwise.
func unrename(r record) error {
	st, err := lstat(r.To)
	if err != nil || st.Ino != r.Ino {
		return nil
	}
	if _, err := lstat(r.Path); err == nil {
		return nil
	}
	return os.Rename(r.To, r.Path)
}

// putMeta sets mode, owner and times back (not following a symbolic link).
func putMeta(r record) error {
	st, err := lstat(r.Path)
	if err != nil {
		return nil // removed by a later step of the undo
	}
	if int(st.Uid) != r.UID || int(st.Gid) != r.GID { // before the mode: chown drops setuid
		if err := unix.Lchown(r.Path, r.UID, r.GID); err != nil && !errors.Is(err, unix.EPERM) {
			return err
		}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFLNK {
		if err := unix.Fchmodat(unix.AT_FDCWD, r.Path, r.Mode&0o7777, 0); err != nil {
			return err
		}
	}
	ts := []unix.Timespec{unix.NsecToTimespec(r.Atime), unix.NsecToTimespec(r.Mtime)}
	return unix.UtimesNanoAt(unix.AT_FDCWD, r.Path, ts, unix.AT_SYMLINK_NOFOLLOW)
}
