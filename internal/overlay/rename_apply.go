package overlay

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/beneath"
	"github.com/tiny-agent/tiny-go/internal/faultpoint"
)

// renameStep renames the tree's directory c.From to c.Path, after its
// mirror in orig/ is whole. Run again, it finds where the directory (its
// inode) is: still at the source (mirror and rename again), at the
// destination (done), or neither (moved by someone else: a conflict).
func (t *Tx) renameStep(r *roots, c Change) error {
	sfd, sname, err := beneath.Parent(r.tree, c.From, false)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var st unix.Stat_t
	if err != nil || unix.Fstatat(sfd, sname, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Ino != c.Ino || !isDir(&st) {
		if err == nil {
			unix.Close(sfd)
		}
		if t.inodeAt(r, c.Path, c.Ino) {
			return nil // done
		}
		return fmt.Errorf("%s: %w", c.From, unix.ENOENT)
	}
	defer unix.Close(sfd)
	if err := t.mirror(sfd, sname, c.From); err != nil {
		return fmt.Errorf("keeping %s for a rewind: %w", c.From, err)
	}
	faultpoint.Hit(faultpoint.TxMirror)
	if c.Had {
		if err := t.moveAside(r, c.Path); err != nil {
			return err
		}
	}
	tfd, tname, err := beneath.Parent(r.tree, c.Path, false)
	if err != nil {
		return err
	}
	defer unix.Close(tfd)
	return renameat(sfd, sname, tfd, tname, true)
}

// inodeAt reports whether the tree's entry at p is the directory ino.
func (t *Tx) inodeAt(r *roots, p string, ino uint64) bool {
	fd, name, err := beneath.Parent(r.tree, p, false)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	return unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Ino == ino && isDir(&st)
}

// mirror makes orig/<rel> the tree's directory name (in dirfd) again,
// each file a hard link to the tree's (a copy where the file system
// refuses one), each directory with its mode and modification time. What
// is there already (a mirror a SIGKILL cut short) is kept.
func (t *Tx) mirror(dirfd int, name, rel string) error {
	fd, err := unix.Openat(dirfd, name, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	src := fmt.Sprintf("/proc/self/fd/%d/.", fd) // "/.": the directory, not the magic link
	dst := t.Orig(rel)
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return err
	}
	return mirrorDir(src, dst, filepath.Join(t.Dir, "mirroring"))
}

// mirrorDir mirrors src at dst; tmp is where a copied file is made.
func mirrorDir(src, dst, tmp string) error {
	var st unix.Stat_t
	if err := unix.Lstat(src, &st); err != nil {
		return err
	}
	if err := os.Mkdir(dst, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	if err := os.Chmod(dst, 0o700); err != nil { // a mirror cut short has its mode already
		return err
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		s, d := filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())
		if e.IsDir() {
			err = mirrorDir(s, d, tmp)
		} else {
			err = mirrorFile(s, d, tmp)
		}
		if err != nil {
			return err
		}
	}
	_ = os.Lchown(dst, int(st.Uid), int(st.Gid)) // only root can; others own both anyway
	if err := os.Chmod(dst, fs.FileMode(st.Mode&0o777)|modeBits(uint32(st.Mode))); err != nil {
		return err
	}
	return unix.UtimesNanoAt(unix.AT_FDCWD, dst, []unix.Timespec{st.Atim, st.Mtim}, unix.AT_SYMLINK_NOFOLLOW)
}

func mirrorFile(src, dst, tmp string) error {
	err := unix.Linkat(unix.AT_FDCWD, src, unix.AT_FDCWD, dst, 0)
	switch {
	case err == nil || errors.Is(err, unix.EEXIST):
		return nil
	case errors.Is(err, unix.EPERM) || errors.Is(err, unix.EMLINK):
		// Not ours to link (protected_hardlinks), or too many links.
		if err := removeAll(tmp); err != nil {
			return err
		}
		if err := copyEntry(src, tmp, map[[2]uint64]string{}); err != nil {
			return err
		}
		return os.Rename(tmp, dst)
	}
	return err
}

// underConflict reports whether p lies inside the destination of a
// rename that was not applied: its changes go aside with it.
func underConflict(p string, failed []string) bool {
	for _, d := range failed {
		if p != d && within(p, d) {
			return true
		}
	}
	return false
}
