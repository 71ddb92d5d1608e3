package overlay

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// stage copies what the command put (its Put entries, whole) from the
// upper layer on the other file system into staged/ on the tree's, so
// that the rest of Apply is renames, as ever. It runs before the journal
// and starts afresh each time: a copy cut short by a SIGKILL is made
// again from the upper layer, which stays until the apply has ended.
// Hard links between the entries stay links; overlay's marks and
// whiteouts are left behind (stripMarks' job on a rename).
func (t *Tx) stage(changes []Change) error {
	staged := filepath.Join(t.Dir, stagedName)
	if err := removeAll(staged); err != nil {
		return err
	}
	links := map[[2]uint64]string{}
	for _, c := range changes {
		if c.Kind != Put {
			continue
		}
		dst := t.source(c.Path)
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return err
		}
		if err := copyEntry(t.upperPath(c.Path), dst, links); err != nil {
			return err
		}
	}
	return nil
}

// copyEntry copies src to dst: a directory with everything below it, a
// file, a symlink or a fifo, with its mode, owner (where allowed) and
// times. links maps the files with several links copied so far to their
// copy.
func copyEntry(src, dst string, links map[[2]uint64]string) error {
	var st unix.Stat_t
	if err := unix.Lstat(src, &st); err != nil {
		return err
	}
	if isWhiteout(src, &st) {
		return nil
	}
	key := [2]uint64{uint64(st.Dev), st.Ino}
	if st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink > 1 {
		if first, ok := links[key]; ok {
			return os.Link(first, dst)
		}
		links[key] = dst
	}
	if err := copyNode(src, dst, &st, links); err != nil {
		return err
	}
	_ = os.Lchown(dst, int(st.Uid), int(st.Gid)) // only root can; others own both anyway
	if st.Mode&unix.S_IFMT != unix.S_IFLNK {
		if err := os.Chmod(dst, fs.FileMode(st.Mode&0o777)|modeBits(uint32(st.Mode))); err != nil {
			return err
		}
	}
	times := []unix.Timespec{st.Atim, st.Mtim}
	return unix.UtimesNanoAt(unix.AT_FDCWD, dst, times, unix.AT_SYMLINK_NOFOLLOW)
}

// copyNode makes dst as src's kind and fills it.
func copyNode(src, dst string, st *unix.Stat_t, links map[[2]uint64]string) error {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		if err := os.Mkdir(dst, 0o700); err != nil {
			return err
		}
		entries, err := os.ReadDir(src)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if err := copyEntry(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name()), links); err != nil {
				return err
			}
		}
		return nil
	case unix.S_IFREG:
		return copyFile(src, dst)
	case unix.S_IFLNK:
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	case unix.S_IFIFO:
		return unix.Mkfifo(dst, 0o600)
	case unix.S_IFSOCK:
		return unix.Mknod(dst, unix.S_IFSOCK|0o600, 0) // an unbound socket's inode, as the command left it
	}
	return fmt.Errorf("%s: a device cannot be copied onto the tree's file system", src)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// OnOverlay reports whether dir is on an overlay file system, which
// cannot be an upper layer itself (BeginApart is then the way).
func OnOverlay(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Type == overlayfsMagic
}
