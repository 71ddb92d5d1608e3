package checkpoint

import "golang.org/x/sys/unix"

// renameNoReplace renames beneath directory descriptors, failing with
// EEXIST where newName exists.
func renameNoReplace(oldDir int, oldName string, newDir int, newName string) error {
	return unix.Renameat2(oldDir, oldName, newDir, newName, unix.RENAME_NOREPLACE)
}
