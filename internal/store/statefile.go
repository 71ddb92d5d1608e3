package store

import "os"

// OpenStateFile opens <cwd>/.tiny-agent/<name>, a per-directory private
// file (the input history), with the rules of StateDir for the directory
// (created with mode 0700 when create is set, no symlinks, owned by this
// user) and of OpenSidecarFile for the file (no symlink, mode 0600,
// regular files only).
func OpenStateFile(cwd, name string, flag int, create bool) (*os.File, error) {
	dir, err := privateDir(cwd, []string{stateDirName}, create)
	if err != nil {
		return nil, err
	}
	return OpenSidecarFile(dir, name, flag)
}
