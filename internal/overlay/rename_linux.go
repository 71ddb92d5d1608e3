package overlay

import "golang.org/x/sys/unix"

// overlayfsMagic is the file system type of an overlay (statfs).
const overlayfsMagic = unix.OVERLAYFS_SUPER_MAGIC

// oPath opens a name only to look at it (fstat), a symlink included.
const oPath = unix.O_PATH

// renameat renames beneath directory descriptors, failing where newName
// exists when noReplace.
func renameat(oldDir int, oldName string, newDir int, newName string, noReplace bool) error {
	var flags uint
	if noReplace {
		flags = unix.RENAME_NOREPLACE
	}
	return unix.Renameat2(oldDir, oldName, newDir, newName, flags)
}
