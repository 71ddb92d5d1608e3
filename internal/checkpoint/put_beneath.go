package checkpoint

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/beneath"
	"github.com/tiny-agent/tiny-go/internal/faultpoint"
)

// putBeneath is put for a path inside the working directory: every name
// is resolved beneath it without following a symlink, at the moment it is
// written (package beneath). A directory that a command or another
// program swapped for a symlink makes the rewind of that path fail in one
// line; nothing is written through it.
func (s *Store) putBeneath(a Action) error {
	root, err := beneath.Root(s.cwd)
	if err != nil {
		return err
	}
	defer unix.Close(root)
	if a.To.Absent {
		dir, name, err := beneath.Parent(root, a.Path, false)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, unix.ENOTDIR) {
			return nil
		}
		if err != nil {
			return err
		}
		defer unix.Close(dir)
		return removeAt(dir, name)
	}
	parentMode := uint32(0o755)
	if a.To.Dir {
		parentMode = 0o700
	}
	d, name := filepath.Split(filepath.FromSlash(a.Path))
	dir, err := beneath.MkdirAll(root, filepath.ToSlash(d), parentMode)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	if a.To.Dir {
		return putDirAt(dir, name, a.To.Mode)
	}
	if a.To.Special != "" {
		// A FIFO or socket has no content to read: it is made again,
		// never opened.
		if err := clearDirAt(dir, name); err != nil {
			return err
		}
		return putSpecialAt(dir, name, filepath.Join(s.cwd, d), a.To)
	}
	data, err := s.readBlob(a.To.Hash)
	if err != nil {
		return err
	}
	if err := clearDirAt(dir, name); err != nil {
		return err
	}
	if a.To.Link {
		tmp := "." + name + ".tiny-tmp-link"
		unix.Unlinkat(dir, tmp, 0)
		if err := unix.Symlinkat(string(data), dir, tmp); err != nil {
			return err
		}
		if err := setMTimeAt(dir, tmp, a.To.MTime); err != nil {
			unix.Unlinkat(dir, tmp, 0)
			return err
		}
		return unix.Renameat(dir, tmp, dir, name)
	}
	mode := a.To.Mode & 0o777
	if mode == 0 {
		mode = 0o644
	}
	return writeAt(dir, name, data, mode, a.To.MTime)
}

// clearDirAt removes the directory that now stands at name in dir where
// a file is to be put back: only an empty one is replaced.
func clearDirAt(dir int, name string) error {
	var st unix.Stat_t
	if unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
		if err := unix.Unlinkat(dir, name, unix.AT_REMOVEDIR); err != nil {
			return fmt.Errorf("a directory is in the way: %w", err)
		}
	}
	return nil
}

// putSpecialAt makes name in dir the FIFO or socket f (mknod makes a
// socket's inode without binding it) through a temporary name, its mode
// and modification time set before the rename. dirPath is dir's path,
// for the systems without mknodat.
func putSpecialAt(dir int, name, dirPath string, f File) error {
	typ := uint32(unix.S_IFIFO)
	if f.Special == "socket" {
		typ = unix.S_IFSOCK
	}
	tmp := "." + name + ".tiny-tmp-node"
	unix.Unlinkat(dir, tmp, 0)
	if err := mknodAt(dir, tmp, dirPath, typ|(f.Mode&0o777)); err != nil {
		return fmt.Errorf("mknod: %w", err)
	}
	// The umask narrowed the mode mknod was given.
	err := unix.Fchmodat(dir, tmp, f.Mode&0o777, 0)
	if err == nil {
		err = setMTimeAt(dir, tmp, f.MTime)
	}
	if err == nil {
		err = unix.Renameat(dir, tmp, dir, name)
	}
	if err != nil {
		unix.Unlinkat(dir, tmp, 0)
	}
	return err
}

// setMTimeAt gives name in dir (not followed if a symlink) its recorded
// modification time, and the same access time: the rewind is not a
// read. 0: none was recorded.
func setMTimeAt(dir int, name string, ns int64) error {
	if ns == 0 {
		return nil
	}
	ts := unix.NsecToTimespec(ns)
	return unix.UtimesNanoAt(dir, name, []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW)
}

// dirTimesBeneath gives the directory rel of the working directory,
// resolved beneath it, the modification time ns.
func (s *Store) dirTimesBeneath(rel string, ns int64) error {
	root, err := beneath.Root(s.cwd)
	if err != nil {
		return err
	}
	defer unix.Close(root)
	dir, name, err := beneath.Parent(root, rel, false)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	return setMTimeAt(dir, name, ns)
}

// removeAt removes a file, symlink or empty directory.
func removeAt(dir int, name string) error {
	err := unix.Unlinkat(dir, name, 0)
	if errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EPERM) {
		err = unix.Unlinkat(dir, name, unix.AT_REMOVEDIR)
	}
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	return err
}

// putDirAt makes name in dir a directory with mode: what stands there
// instead (a file or symlink) goes first.
func putDirAt(dir int, name string, mode uint32) error {
	var st unix.Stat_t
	if unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
		if err := unix.Unlinkat(dir, name, 0); err != nil {
			return err
		}
	}
	if err := mkdirWithMode(dir, name, mode); err != nil {
		return err
	}
	fd, err := unix.Openat(dir, name, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fchmod(fd, mode&0o777)
}

// mkdirWithMode makes the directory name in dir, unless there is one,
// under a temporary name first, given its mode there, then renamed in: a
// rewind killed in between leaves no directory of another mode where it
// goes (a stale temporary, which the next rewind removes).
func mkdirWithMode(dir int, name string, mode uint32) error {
	var r [6]byte
	rand.Read(r[:])
	tmp := "." + name + ".tiny-tmp-" + hex.EncodeToString(r[:])
	if err := unix.Mkdirat(dir, tmp, 0o700); err != nil {
		return err
	}
	faultpoint.Hit(faultpoint.RewindDir)
	err := chmodDirAt(dir, tmp, mode)
	if err == nil {
		err = renameNoReplace(dir, tmp, dir, name)
	}
	if err != nil {
		unix.Unlinkat(dir, tmp, unix.AT_REMOVEDIR)
		if errors.Is(err, unix.EEXIST) {
			return nil // there already: its mode is set next
		}
	}
	return err
}

func chmodDirAt(dir int, name string, mode uint32) error {
	fd, err := unix.Openat(dir, name, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return unix.Fchmod(fd, mode&0o777)
}

// writeAt writes data to name in dir through a temporary file beside it
// and a rename, as writeAtomic does by path.
func writeAt(dir int, name string, data []byte, mode uint32, mtime int64) error {
	var st unix.Stat_t
	if unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink > 1 {
		// A file with other names (a hard link a command kept, as plain
		// bash does): written in place, so that they all come back.
		return writeInPlaceAt(dir, name, data, mode, mtime)
	}
	var r [6]byte
	rand.Read(r[:])
	tmp := "." + name + ".tiny-tmp-" + hex.EncodeToString(r[:])
	fd, err := unix.Openat(dir, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(fs.FileMode(mode))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = setMTimeAt(dir, tmp, mtime)
	}
	if err == nil {
		err = unix.Renameat(dir, tmp, dir, name)
	}
	if err != nil {
		unix.Unlinkat(dir, tmp, 0)
	}
	return err
}

// writeInPlaceAt writes data into the file at name itself (same inode).
// Not atomic: a SIGKILL midway leaves it cut, and the rewind run again
// then says it changed meanwhile (--force puts it back).
func writeInPlaceAt(dir int, name string, data []byte, mode uint32, mtime int64) error {
	fd, err := unix.Openat(dir, name, unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), name)
	_, err = f.WriteAt(data, 0)
	if err == nil {
		err = f.Truncate(int64(len(data)))
	}
	if err == nil {
		err = f.Chmod(fs.FileMode(mode))
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = setMTimeAt(dir, name, mtime)
	}
	return err
}

// removeEmptyBeneath removes the empty directory rel of the working
// directory, resolved beneath it without following symlinks.
func (s *Store) removeEmptyBeneath(rel string) error {
	root, err := beneath.Root(s.cwd)
	if err != nil {
		return err
	}
	defer unix.Close(root)
	dir, name, err := beneath.Parent(root, rel, false)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	return unix.Unlinkat(dir, name, unix.AT_REMOVEDIR)
}

// removeTempsBeneath removes the stale temporary files of names in the
// tree's directory rel.
func (s *Store) removeTempsBeneath(rel string, names map[string]bool) {
	root, err := beneath.Root(s.cwd)
	if err != nil {
		return
	}
	defer unix.Close(root)
	fd, err := beneath.Dir(root, rel)
	if err != nil {
		return
	}
	d := os.NewFile(uintptr(fd), rel)
	defer d.Close()
	entries, _ := d.Readdirnames(-1)
	for _, n := range entries {
		if isStaleTemp(n, names) {
			if unix.Unlinkat(fd, n, 0) != nil {
				unix.Unlinkat(fd, n, unix.AT_REMOVEDIR) // a directory's (mkdirWithMode)
			}
		}
	}
}
