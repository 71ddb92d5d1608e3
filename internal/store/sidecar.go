package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// sidecarExt names a session's sidecar directory: the session file name
// with .jsonl replaced by it. It never matches a session file name, so
// listing and lookup by id pass it by.
const sidecarExt = ".d"

// SidecarDir returns the directory beside session file sessionPath where
// tiny-go keeps what the shared session format has no place for (reasoning
// details, a fork's origin, the checkpoint index):
// <sessions dir>/<file name without .jsonl>.d. With create a missing
// directory is made with mode 0700. Every component from the working
// directory down is opened without following symlinks, and a directory
// that another user owns or that others can write is refused, so nothing
// planted there can redirect what tiny-go writes.
func SidecarDir(sessionPath string, create bool) (string, error) {
	name := filepath.Base(sessionPath)
	if !strings.HasSuffix(name, sessionExt) {
		return "", fmt.Errorf("%s is not a session file", sessionPath)
	}
	sessions := filepath.Dir(sessionPath)
	cwd := filepath.Dir(filepath.Dir(sessions))
	if filepath.Base(sessions) != sessionsDirName || filepath.Base(filepath.Dir(sessions)) != stateDirName {
		return "", fmt.Errorf("%s is not under a .tiny-agent/sessions directory", sessionPath)
	}
	return privateDir(cwd, []string{stateDirName, sessionsDirName, strings.TrimSuffix(name, sessionExt) + sidecarExt}, create)
}

// StateDir returns <cwd>/.tiny-agent/<name>, a per-directory private
// directory (checkpoints, process records, MCP logs), with the same rules
// as SidecarDir.
func StateDir(cwd, name string, create bool) (string, error) {
	if name == "" || strings.ContainsRune(name, '/') || name == "." || name == ".." {
		return "", fmt.Errorf("invalid state directory name %q", name)
	}
	return privateDir(cwd, []string{stateDirName, name}, create)
}

// OpenSidecarFile opens name inside dir (from SidecarDir or StateDir)
// without following a symlink; a file it creates gets mode 0600. Only
// regular files are opened.
func OpenSidecarFile(dir, name string, flag int) (*os.File, error) {
	if name == "" || strings.ContainsRune(name, '/') || name == "." || name == ".." {
		return nil, fmt.Errorf("invalid file name %q", name)
	}
	path := filepath.Join(dir, name)
	fd, err := unix.Open(path, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC, fileMode)
	return regularFile(fd, err, path)
}

// ReadSidecarFile returns the content of file name in the sidecar
// directory of the session at sessionPath, or nil when the directory or
// the file does not exist. The directory and the file are opened as
// SidecarDir and OpenSidecarFile open them.
func ReadSidecarFile(sessionPath, name string) ([]byte, error) {
	dir, err := SidecarDir(sessionPath, false)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	f, err := OpenSidecarFile(dir, name, os.O_RDONLY)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// CreateSidecarFile writes data as the new file name beside the session at
// sessionPath (the sidecar directory is made if missing; an existing file
// is an error) and syncs it.
func CreateSidecarFile(sessionPath, name string, data []byte) error {
	dir, err := SidecarDir(sessionPath, true)
	if err != nil {
		return err
	}
	return WriteNewFile(dir, name, data)
}

// WriteNewFile writes data as the new file name in the private directory
// dir (from SidecarDir or StateDir) and syncs it. An existing file is an
// error (os.ErrExist); a file the write or sync failed on is removed, so
// a later try starts clean.
func WriteNewFile(dir, name string, data []byte) error {
	err := writeSidecarFile(dir, name, os.O_EXCL, data)
	if err != nil && !errors.Is(err, os.ErrExist) {
		_ = os.Remove(filepath.Join(dir, name))
	}
	return err
}

// ReplaceSidecarFile replaces file name beside the session at sessionPath
// with data, atomically: a synced temporary file renamed over it, then the
// directory synced, so a crash leaves the old or the new file whole.
func ReplaceSidecarFile(sessionPath, name string, data []byte) error {
	dir, err := SidecarDir(sessionPath, true)
	if err != nil {
		return err
	}
	if err := writeSidecarAtomically(dir, name, data); err != nil {
		return err
	}
	return syncDirPath(dir)
}

// writeSidecarFile writes and syncs file name in the sidecar directory dir,
// opened with O_WRONLY|O_CREATE and flag.
func writeSidecarFile(dir, name string, flag int, data []byte) error {
	f, err := OpenSidecarFile(dir, name, os.O_WRONLY|os.O_CREATE|flag)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// privateDir opens cwd/names[0]/names[1]/... one component at a time with
// O_NOFOLLOW, creating missing ones with mode 0700 when create is set, and
// checks that each is a directory this user owns and only this user can
// write.
func privateDir(cwd string, names []string, create bool) (string, error) {
	fd, err := unix.Open(cwd, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", &os.PathError{Op: "open", Path: cwd, Err: err}
	}
	path := cwd
	for _, name := range names {
		path = filepath.Join(path, name)
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) && create {
			if err = unix.Mkdirat(fd, name, dirMode); err == nil || errors.Is(err, unix.EEXIST) {
				next, err = unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			}
		}
		unix.Close(fd)
		if err != nil {
			return "", dirError(path, err)
		}
		fd = next
		if err := checkPrivate(fd, path); err != nil {
			unix.Close(fd)
			return "", err
		}
		if name == stateDirName && create {
			ignoreAll(fd)
		}
	}
	unix.Close(fd)
	return path, nil
}

// gitignore is the content of .tiny-agent/.gitignore: sessions,
// approvals, checkpoints and process records are private to this machine
// and must never be staged by a `git add -A` (as virtual environments do).
const gitignore = "# Created by tiny-go: nothing in .tiny-agent belongs in version control.\n*\n"

// ignoreAll writes .gitignore into the state directory open at dir when it
// has none. One openat when it exists; a file the user changed is kept.
func ignoreAll(dir int) {
	fd, err := unix.Openat(dir, ".gitignore", unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, fileMode)
	if err != nil {
		return // there already, or nothing to be done about it here
	}
	f := os.NewFile(uintptr(fd), ".gitignore")
	_, _ = f.WriteString(gitignore)
	f.Close()
}

// checkPrivate refuses a directory that another user owns or that group
// or others can write: either could swap its entries under tiny-go.
func checkPrivate(fd int, path string) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return &os.PathError{Op: "stat", Path: path, Err: err}
	}
	if int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s is owned by another user (uid %d); refusing to use it", path, st.Uid)
	}
	if st.Mode&0o022 != 0 {
		return fmt.Errorf("%s is writable by other users (mode %04o); refusing to use it (chmod go-w)", path, st.Mode&0o7777)
	}
	return nil
}

// EnsureStateDir returns <cwd>/.tiny-agent, created (0700, with its
// .gitignore) when missing, with the rules of StateDir.
func EnsureStateDir(cwd string) (string, error) {
	return privateDir(cwd, []string{stateDirName}, true)
}
