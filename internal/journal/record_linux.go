//go:build linux && (amd64 || arm64)

package journal

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// record is one line of a journal's log: what to do, in reverse order, to
// undo one change. Every record is synced before the change is let go on.
type record struct {
	Op    string `json:"op"` // file, len, ranges, absent, gone, rename, exchange, meta
	Path  string `json:"path"`
	To    string `json:"to,omitempty"`   // rename, exchange: the new name
	Data  string `json:"data,omitempty"` // file, ranges, gone: the pre-image in the journal
	Size  int64  `json:"size,omitempty"` // len, ranges: the length before
	Mode  uint32 `json:"mode,omitempty"`
	UID   int    `json:"uid,omitempty"`
	GID   int    `json:"gid,omitempty"`
	Atime int64  `json:"atime,omitempty"`
	Mtime int64  `json:"mtime,omitempty"`
	Ino   uint64 `json:"ino,omitempty"` // the inode: that moved (rename, exchange), or whose state is kept
	// Inline is a small file's pre-image, in the record: one sync, not two.
	Inline []byte `json:"inline,omitempty"`
}

// inlineMax is the size up to which a pre-image goes in its record.
const inlineMax = 64 << 10

type fileID struct{ dev, ino uint64 }

// Levels of a file's saved content: an append keeps only the length.
const (
	levelNone = iota
	levelLen
	levelFull
)

// journal writes the records of one command. Every record that keeps what
// a call destroys is synced, after its pre-image, before the call goes on.
type journal struct {
	dir     string
	log     *os.File
	data    *os.File // the data directory, synced after a hard link
	n       int
	content map[fileID]int
	meta    map[fileID]bool
	parents map[string]bool // directories saveParent kept (or found kept)
	ranged  map[fileID]*ranged
	// fresh are the names this command made (and did not move since): an
	// unlink of one keeps nothing, as the name's undo is its removal.
	fresh map[string]bool
	// volatile: nothing is synced until close (Options.Volatile).
	volatile bool
	// lens counts the files whose length alone is kept (an append): an
	// F_SETFL matters only while there is one.
	lens int
	// guard, when set, says whether a file opened to keep its pre-image
	// (content: to copy what it holds, else to link it) may be kept
	// (supervisor.ownsFd): else it is left alone.
	guard func(fd int, content bool) bool
	// unsynced: a record written since the last sync (close syncs it).
	unsynced bool
}

// errExcluded is a file the guard refuses: nothing is kept of it.
var errExcluded = errors.New("journal: an excluded file")

// open opens path to read its pre-image, if the guard allows.
func (j *journal) open(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil || j.guard == nil || j.guard(int(f.Fd()), true) {
		return f, err
	}
	f.Close()
	return nil, errExcluded
}

const logName, dataDir = "log", "d"

func openJournal(dir string) (*journal, error) {
	if err := os.MkdirAll(filepath.Join(dir, dataDir), 0o700); err != nil {
		return nil, fmt.Errorf("journal: make %s: %w", dir, err)
	}
	log, err := os.OpenFile(filepath.Join(dir, logName), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("journal: open the log: %w", err)
	}
	d, err := os.Open(filepath.Join(dir, dataDir))
	if err != nil {
		log.Close()
		return nil, fmt.Errorf("journal: open the data directory: %w", err)
	}
	return &journal{dir: dir, log: log, data: d, content: map[fileID]int{}, meta: map[fileID]bool{}, parents: map[string]bool{}, ranged: map[fileID]*ranged{}, fresh: map[string]bool{}}, nil
}

func (j *journal) close() error {
	var err error
	if j.unsynced { // a command that changed nothing costs no sync
		err = j.log.Sync()
	}
	j.log.Close()
	j.data.Close()
	for _, r := range j.ranged {
		r.src.Close()
		r.data.Close()
	}
	if err != nil {
		return fmt.Errorf("journal: sync the log: %w", err)
	}
	return nil
}

func (j *journal) add(r record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("journal: encode a record: %w", err)
	}
	if _, err := j.log.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("journal: write the log: %w", err)
	}
	// A name made or a time changed destroys nothing: its record reaches the
	// disk with the next synced one (the log is appended in order) or at the
	// end. The page cache alone survives a SIGKILL; the sync is for a power cut.
	if j.volatile {
		return nil
	}
	if r.Op == "absent" || r.Op == "meta" {
		j.unsynced = true
		return nil
	}
	if err := j.log.Sync(); err != nil {
		return fmt.Errorf("journal: sync the log: %w", err)
	}
	j.unsynced = false
	return nil
}

func (j *journal) nextData() (rel, abs string) {
	j.n++
	rel = filepath.Join(dataDir, strconv.Itoa(j.n))
	return rel, filepath.Join(j.dir, rel)
}

func withMeta(r record, st *unix.Stat_t) record {
	r.Ino = st.Ino // whose pre-image it is, under any of its names
	r.Mode, r.UID, r.GID = st.Mode, int(st.Uid), int(st.Gid)
	r.Atime, r.Mtime = unix.TimespecToNsec(st.Atim), unix.TimespecToNsec(st.Mtim)
	return r
}

func lstat(path string) (*unix.Stat_t, error) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

func idOf(st *unix.Stat_t) fileID { return fileID{uint64(st.Dev), st.Ino} }

// saveContent keeps a regular file's content before a change: its length
// alone when level is levelLen (an append), else a whole pre-image, a
// reflink where the file system has them, a copy elsewhere.
func (j *journal) saveContent(path string, st *unix.Stat_t, level int) error {
	if st.Mode&unix.S_IFMT != unix.S_IFREG || j.content[idOf(st)] >= level {
		return nil
	}
	if level == levelLen {
		j.content[idOf(st)] = levelLen
		j.lens++
		return j.add(withMeta(record{Op: "len", Path: path, Size: st.Size}, st))
	}
	r := withMeta(record{Op: "file", Path: path}, st)
	in, err := j.open(path)
	if errors.Is(err, errExcluded) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("journal: read the pre-image of %s: %w", path, err)
	}
	defer in.Close()
	if st.Size <= inlineMax {
		b, err := io.ReadAll(in)
		if err != nil {
			return fmt.Errorf("journal: read the pre-image of %s: %w", path, err)
		}
		r.Inline = b
	} else {
		rel, abs := j.nextData()
		if err := clone(in, abs, !j.volatile); err != nil {
			return err
		}
		r.Data = rel
	}
	j.content[idOf(st)] = levelFull
	return j.add(r)
}

// clone copies in to a new dst, by FICLONE when it can, and syncs it.
func clone(in *os.File, dst string, durable bool) error {
	src := in.Name()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("journal: keep the pre-image of %s: %w", src, err)
	}
	defer out.Close()
	if unix.IoctlFileClone(int(out.Fd()), int(in.Fd())) != nil {
		if _, err := io.Copy(out, in); err != nil {
			return fmt.Errorf("journal: copy the pre-image of %s: %w", src, err)
		}
	}
	if !durable {
		return nil
	}
	if err := out.Sync(); err != nil {
		return fmt.Errorf("journal: sync the pre-image of %s: %w", src, err)
	}
	return nil
}

// saveMeta keeps an inode's mode, owner and times once per command.
func (j *journal) saveMeta(path string) error {
	st, err := lstat(path)
	if err != nil || j.meta[idOf(st)] {
		return nil
	}
	j.meta[idOf(st)] = true
	return j.add(withMeta(record{Op: "meta", Path: path}, st))
}

// saveParent keeps the times of the directory whose entries change, once
// per name (until a rename or rmdir may put another directory there).
func (j *journal) saveParent(path string) error {
	dir := filepath.Dir(path)
	if j.parents[dir] {
		return nil
	}
	j.parents[dir] = true
	return j.saveMeta(dir)
}

// created records a name that did not exist, for deletion.
func (j *journal) created(path string) error {
	if _, err := lstat(path); err == nil {
		return nil // the call fails with EEXIST, or opens what is there
	}
	return j.absent(path)
}

// absent records a name known not to exist, for deletion.
func (j *journal) absent(path string) error {
	if err := j.saveParent(path); err != nil {
		return err
	}
	j.fresh[path] = true
	return j.add(record{Op: "absent", Path: path})
}

// forget drops path, and every name under it when it is a directory, from
// the fresh names: a name that moved may now hold an inode from before.
func (j *journal) forget(path string, dir bool) {
	delete(j.fresh, path)
	if !dir {
		return
	}
	for p := range j.fresh {
		if strings.HasPrefix(p, path+"/") {
			delete(j.fresh, p)
		}
	}
}

// removed keeps what an unlink takes away, the inode itself, by a hard
// link into the journal. A directory is not removed here: see rmdir.
func (j *journal) removed(path string) error {
	st, err := lstat(path)
	if err != nil || st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return nil // the call fails (ENOENT, EISDIR)
	}
	if err := j.saveParent(path); err != nil {
		return err
	}
	if j.fresh[path] {
		delete(j.fresh, path)
		return nil
	}
	rel, abs := j.nextData()
	if err := j.link(path, abs); err != nil {
		if errors.Is(err, errExcluded) {
			return nil
		}
		if !errors.Is(err, unix.EXDEV) || st.Mode&unix.S_IFMT != unix.S_IFREG {
			return fmt.Errorf("journal: keep %s (the journal must be on the tree's file system): %w", path, err)
		}
		in, err := j.open(path)
		if err != nil {
			return fmt.Errorf("journal: read the pre-image of %s: %w", path, err)
		}
		defer in.Close()
		if err := clone(in, abs, !j.volatile); err != nil {
			return err
		}
	}
	if err := j.syncData(); err != nil {
		return fmt.Errorf("journal: sync the data directory: %w", err)
	}
	return j.add(withMeta(record{Op: "gone", Path: path, Data: rel}, st))
}

// link makes abs a hard link to the file path names; with a guard,
// through an fd the guard checked (what is linked is what was checked).
func (j *journal) link(path, abs string) error {
	if j.guard == nil {
		return unix.Linkat(unix.AT_FDCWD, path, unix.AT_FDCWD, abs, 0)
	}
	fd, err := unix.Open(path, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if !j.guard(fd, false) {
		return errExcluded
	}
	return unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), unix.AT_FDCWD, abs, unix.AT_SYMLINK_FOLLOW)
}

// rmdir does an rmdir itself, as a rename of the empty directory into the
// journal, so that Restore gives the same inode back. It returns the
// call's result, 0 or an errno.
func (j *journal) rmdir(path string) (unix.Errno, error) {
	clear(j.parents)
	st, err := lstat(path)
	if err != nil {
		return err.(unix.Errno), nil
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return unix.ENOTDIR, nil
	}
	if !emptyDir(path) {
		return unix.ENOTEMPTY, nil
	}
	if err := j.saveParent(path); err != nil {
		return 0, err
	}
	j.forget(path, true)
	rel, abs := j.nextData()
	// Recorded first: a crash after the record and before the rename
	// leaves a record whose undo finds nothing to move back.
	if err := j.add(withMeta(record{Op: "gone", Path: path, Data: rel}, st)); err != nil {
		return 0, err
	}
	if err := os.Rename(path, abs); err != nil {
		return 0, fmt.Errorf("journal: keep the directory %s: %w", path, err)
	}
	return 0, j.syncData()
}

// syncData syncs the data directory (a kept inode's link), unless the
// journal is volatile.
func (j *journal) syncData() error {
	if j.volatile {
		return nil
	}
	return j.data.Sync()
}

func emptyDir(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	return errors.Is(err, io.EOF)
}

// renamed records a rename to undo, after keeping the inode it replaces.
// An empty directory it replaces is moved into the journal first, only
// when mayRmdir says the command may remove it itself: else the rename is
// the kernel's to refuse.
func (j *journal) renamed(from, to string, inFrom, inTo bool, flags int, mayRmdir func() bool) error {
	clear(j.parents)
	st, err := lstat(from)
	if err != nil {
		return nil
	}
	for _, p := range [][2]any{{from, inFrom}, {to, inTo}} {
		if p[1].(bool) {
			if err := j.saveParent(p[0].(string)); err != nil {
				return err
			}
		}
	}
	toSt, toErr := lstat(to)
	if flags&unix.RENAME_NOREPLACE != 0 && toErr == nil {
		return nil // fails with EEXIST (mv tries this first)
	}
	isDir := st.Mode&unix.S_IFMT == unix.S_IFDIR
	freshTo := j.fresh[to] && !isDir
	// The new name is fresh only if it holds nothing from before even when
	// the rename fails.
	fresh := j.fresh[from] && !isDir && flags&unix.RENAME_EXCHANGE == 0 && (toErr != nil || freshTo)
	j.forget(from, isDir)
	j.forget(to, isDir || (toErr == nil && toSt.Mode&unix.S_IFMT == unix.S_IFDIR))
	if flags&unix.RENAME_EXCHANGE != 0 {
		return j.add(record{Op: "exchange", Path: from, To: to, Ino: st.Ino})
	}
	if inTo && !freshTo {
		// What the rename replaces is kept: a file by a link, an empty
		// directory moved into the journal (the rename then takes a free name).
		if isDir && mayRmdir() {
			if _, err := j.rmdir(to); err != nil {
				return err
			}
		}
		if err := j.removed(to); err != nil {
			return err
		}
	}
	if !inFrom {
		return j.add(record{Op: "absent", Path: to})
	}
	if err := j.add(record{Op: "rename", Path: from, To: to, Ino: st.Ino}); err != nil {
		return err
	}
	if fresh {
		j.fresh[to] = true
	}
	return nil
}
