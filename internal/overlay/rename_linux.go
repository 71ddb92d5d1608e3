package overlay

import "golang.org/x/sys/unix"

// overlayfsMagic is the file system type of an overlay (statfs).
const overlayfsMagic = unix.OVERLAYFS_SUPER_MAGIC

// renameNoReplace renames from to to unless to exists.
func renameNoReplace(from, to string) error {
	return unix.Renameat2(unix.AT_FDCWD, from, unix.AT_FDCWD, to, unix.RENAME_NOREPLACE)
}
