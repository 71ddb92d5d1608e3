//go:build !linux

package checkpoint

import (
	"errors"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// mknodAt makes the node name in dir with mode (type and permissions).
// Without mknodat it is made by dir's path; the node must then be found
// in dir itself, or a directory swapped in the meantime got it and the
// rewind of that path fails (the empty node is removed).
func mknodAt(dir int, name, dirPath string, mode uint32) error {
	p := filepath.Join(dirPath, name)
	if err := unix.Mknod(p, mode, 0); err != nil {
		return err
	}
	var at, byPath unix.Stat_t
	if unix.Fstatat(dir, name, &at, unix.AT_SYMLINK_NOFOLLOW) != nil ||
		unix.Lstat(p, &byPath) != nil || at.Ino != byPath.Ino || at.Dev != byPath.Dev {
		unix.Unlink(p)
		return errors.New("the directory changed while the node was made")
	}
	return nil
}
