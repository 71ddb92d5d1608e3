package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sys/unix"
)

// The canonical location of session files, relative to the working
// directory (session.md §1).
const (
	stateDirName    = ".tiny-agent"
	sessionsDirName = "sessions"
	sessionExt      = ".jsonl"
	// stampLayout is the UTC stamp of a file name without its
	// milliseconds: 2026-12-02T12-51-32-123Z ("-123Z" is appended).
	stampLayout = "2006-01-02T15-04-05"
	dirMode     = 0o700
	fileMode    = 0o600
)

// sessionNameRE matches <UTC stamp>_<uuid>.jsonl; group 1 is the stamp,
// group 2 the id.
var sessionNameRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z)_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$`)
})

// SessionsDir returns the canonical sessions directory of cwd,
// <cwd>/.tiny-agent/sessions.
func SessionsDir(cwd string) string {
	return filepath.Join(cwd, stateDirName, sessionsDirName)
}

// FileName returns the canonical file name of session id created at t:
// <UTC stamp>_<id>.jsonl with a stamp like 2026-12-02T12-51-32-123Z.
func FileName(t time.Time, id string) string {
	t = t.UTC()
	return fmt.Sprintf("%s-%03dZ_%s%s", t.Format(stampLayout), t.Nanosecond()/int(time.Millisecond), id, sessionExt)
}

// parseFileName splits a canonical session file name into its stamp time
// and id; ok is false for any other name.
func parseFileName(name string) (stamp time.Time, id string, ok bool) {
	m := sessionNameRE().FindStringSubmatch(name)
	if m == nil {
		return time.Time{}, "", false
	}
	n := len(stampLayout)
	base, err := time.Parse(stampLayout, m[1][:n])
	if err != nil {
		return time.Time{}, "", false
	}
	ms, _ := strconv.Atoi(m[1][n+1 : n+4]) // three digits by the pattern
	return base.Add(time.Duration(ms) * time.Millisecond), m[2], true
}

// ValidID reports whether id is a canonical (lowercase, hyphenated)
// version 7 UUID, the only form a session id takes.
func ValidID(id string) bool {
	u, err := uuid.Parse(id)
	return err == nil && u.String() == id && u.Version() == 7
}

// openSessionsDir opens <cwd>/.tiny-agent/sessions one component at a
// time with O_NOFOLLOW, so neither component may be a symlink (cwd
// itself may), and refuses either when another user owns it or can write
// it. With create, missing components are made with mode 0700 and created
// reports whether the sessions directory is new.
func openSessionsDir(cwd string, create bool) (dir *os.File, created bool, err error) {
	fd, err := unix.Open(cwd, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false, &os.PathError{Op: "open", Path: cwd, Err: err}
	}
	path := cwd
	for _, name := range []string{stateDirName, sessionsDirName} {
		path = filepath.Join(path, name)
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) && create {
			if err = unix.Mkdirat(fd, name, dirMode); err == nil || errors.Is(err, unix.EEXIST) {
				created = created || err == nil
				next, err = unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			}
		}
		unix.Close(fd)
		if err != nil {
			return nil, false, dirError(path, err)
		}
		fd = next
		// A directory another user owns or can write could have its
		// entries swapped under tiny-go: refuse it.
		if err := checkPrivate(fd, path); err != nil {
			unix.Close(fd)
			return nil, false, err
		}
		if name == stateDirName {
			ignoreAll(fd) // also on start (a resume) when it went missing
		}
	}
	return os.NewFile(uintptr(fd), path), created, nil
}

func dirError(path string, err error) error {
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
		return fmt.Errorf("%s is not a directory (symlinks are refused)", path)
	}
	return &os.PathError{Op: "open", Path: path, Err: err}
}

// openAt opens name inside dir without following a symlink and checks that
// it is a regular file.
func openAt(dir *os.File, name string, flags int) (*os.File, error) {
	path := filepath.Join(dir.Name(), name)
	fd, err := unix.Openat(int(dir.Fd()), name, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, fileMode)
	return regularFile(fd, err, path)
}

// openNoFollow opens an explicit path for reading and writing without
// following a symlink in its last component.
func openNoFollow(path string) (*os.File, error) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	return regularFile(fd, err, path)
}

// regularFile turns the result of an O_NOFOLLOW open into a file, refusing
// symlinks and anything but a regular file.
func regularFile(fd int, err error, path string) (*os.File, error) {
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, fmt.Errorf("%s is a symlink; refusing to open it", path)
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	if err := checkRegular(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func checkRegular(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", f.Name())
	}
	return nil
}

// findByID returns the name of the one canonical file of session id in
// dir.
func findByID(dir *os.File, id string) (string, error) {
	entries, err := os.ReadDir(dir.Name())
	if err != nil {
		return "", err
	}
	var found []string
	for _, e := range entries {
		if _, eid, ok := parseFileName(e.Name()); ok && eid == id {
			found = append(found, e.Name())
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("session %s not found in %s", id, dir.Name())
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("session %s is ambiguous: %d files in %s", id, len(found), dir.Name())
}

// lockFile takes the exclusive advisory lock of a session file without
// waiting; the lock lives as long as the open file description.
func lockFile(f *os.File, id string) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return &LockedError{ID: id}
		}
		return fmt.Errorf("lock session %s: %w", id, err)
	}
}

// ErrLocked is matched (errors.Is) by the error of opening a session that
// another process holds open for writing.
var ErrLocked = errors.New("session is open in another process")

// LockedError reports that another process holds the session's lock.
type LockedError struct{ ID string }

func (e *LockedError) Error() string { return "session " + e.ID + " is open in another process" }

// Is makes errors.Is(err, ErrLocked) true.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

// ReadByID reads session id of cwd without locking or modifying it, with
// the same rules as Open: a regular file directly under the canonical
// sessions directory, no symlinks. It returns the file's path and bytes.
func ReadByID(cwd, id string) (path string, data []byte, err error) {
	f, err := OpenByID(cwd, id)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	data, err = io.ReadAll(f)
	if err != nil {
		return "", nil, fmt.Errorf("session %s: %w", id, err)
	}
	return f.Name(), data, nil
}

// IDOfPath is the session id of a canonical session file path.
func IDOfPath(path string) (string, bool) {
	_, id, ok := parseFileName(filepath.Base(path))
	return id, ok
}

// PathByID returns the path of the one canonical file of session id in
// the sessions directory of cwd, without reading it.
func PathByID(cwd, id string) (string, error) {
	if !ValidID(id) {
		return "", fmt.Errorf("%q is not a session id", id)
	}
	dir, _, err := openSessionsDir(cwd, false)
	if err != nil {
		return "", fmt.Errorf("session %s: %w", id, err)
	}
	defer dir.Close()
	name, err := findByID(dir, id)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir.Name(), name), nil
}

// OpenByID opens the session file of id read-only, like ReadByID, for a
// reader that streams it; the caller closes it.
func OpenByID(cwd, id string) (*os.File, error) {
	if !ValidID(id) {
		return nil, fmt.Errorf("%q is not a session id", id)
	}
	dir, _, err := openSessionsDir(cwd, false)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	defer dir.Close()
	name, err := findByID(dir, id)
	if err != nil {
		return nil, err
	}
	f, err := openAt(dir, name, unix.O_RDONLY)
	if err != nil {
		return nil, fmt.Errorf("session %s: %w", id, err)
	}
	return f, nil
}
