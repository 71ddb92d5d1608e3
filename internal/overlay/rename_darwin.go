package overlay

import "golang.org/x/sys/unix"

// overlayfsMagic is Linux's overlay type, which no macOS file system has:
// macOS never runs a command over an overlay, and this package only has to
// build there.
const overlayfsMagic = 0x794c7630

// renameNoReplace renames from to to unless to exists.
func renameNoReplace(from, to string) error {
	return unix.RenamexNp(from, to, unix.RENAME_EXCL)
}
