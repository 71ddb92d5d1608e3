package overlay

import "golang.org/x/sys/unix"

// overlayfsMagic is Linux's overlay type, which no macOS file system has:
// macOS never runs a command over an overlay, and this package only has to
// build there.
const overlayfsMagic = 0x794c7630

// oPath: macOS has no O_PATH (nor runs an apply: it has no overlay).
const oPath = unix.O_RDONLY

// renameat renames beneath directory descriptors, failing where newName
// exists when noReplace.
func renameat(oldDir int, oldName string, newDir int, newName string, noReplace bool) error {
	if noReplace {
		return unix.RenameatxNp(oldDir, oldName, newDir, newName, unix.RENAME_EXCL)
	}
	return unix.Renameat(oldDir, oldName, newDir, newName)
}
