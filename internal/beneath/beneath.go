// Package beneath resolves paths that tiny-go read from its own state
// (a journal, a transaction's states, a kept original) inside a root
// directory without following a symlink, at the moment they are used:
// openat2 with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS, or on kernels without
// it (before 5.6) a walk of openat calls with O_NOFOLLOW. Renames, creates
// and deletes then go through the directory descriptors it returns
// (renameat2, unlinkat, mkdirat), so a directory swapped for a symlink
// meanwhile is refused instead of followed out of the root.
package beneath

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// ErrEscape is a path that leaves its root or goes through a symlink.
var ErrEscape = errors.New("resolves through a symlink or out of its root")

// noOpenat2 is set once the kernel said it has no openat2.
var noOpenat2 atomic.Bool

// Root opens dir itself (following symlinks: the caller names it) as a
// directory to resolve beneath.
func Root(dir string) (int, error) {
	fd, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("opening %s: %w", dir, err)
	}
	return fd, nil
}

// Dir opens the directory rel (slash-separated, relative; "" or "." is
// root itself) beneath root without following any symlink.
func Dir(root int, rel string) (int, error) {
	rel = strings.Trim(rel, "/")
	if rel == "" || rel == "." {
		return unix.Openat(root, ".", unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	}
	if !filepath.IsLocal(rel) {
		return -1, fmt.Errorf("%s: %w", rel, ErrEscape)
	}
	if fd, tried, err := openat2Dir(root, rel); tried {
		return fd, err
	}
	return walk(root, rel, false, 0)
}

// MkdirAll is Dir that creates the missing directories with mode.
func MkdirAll(root int, rel string, mode uint32) (int, error) {
	fd, err := Dir(root, rel)
	if err == nil || !errors.Is(err, unix.ENOENT) {
		return fd, err
	}
	return walk(root, strings.Trim(rel, "/"), true, mode)
}

// walk opens rel one name at a time with O_NOFOLLOW: a symlink anywhere
// is ENOTDIR or ELOOP, never followed.
func walk(root int, rel string, create bool, mode uint32) (int, error) {
	fd, err := unix.Openat(root, ".", unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	for name := range strings.SplitSeq(rel, "/") {
		if name == "" || name == "." {
			continue
		}
		if name == ".." {
			unix.Close(fd)
			return -1, fmt.Errorf("%s: %w", rel, ErrEscape)
		}
		if create {
			if err := unix.Mkdirat(fd, name, mode); err != nil && !errors.Is(err, unix.EEXIST) {
				unix.Close(fd)
				return -1, err
			}
		}
		next, err := unix.Openat(fd, name, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return -1, wrap(rel, err)
		}
		fd = next
	}
	return fd, nil
}

// wrap names a symlink or an escape as ErrEscape (keeping the errno, so
// callers can still tell it apart).
func wrap(rel string, err error) error {
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV) {
		return fmt.Errorf("%s: %w (%w)", rel, ErrEscape, err)
	}
	return fmt.Errorf("%s: %w", rel, err)
}

// Parent opens the directory holding rel beneath root and returns it with
// rel's last name.
func Parent(root int, rel string, create bool) (fd int, name string, err error) {
	dir, name := splitRel(rel)
	if create {
		fd, err = MkdirAll(root, dir, 0o700)
	} else {
		fd, err = Dir(root, dir)
	}
	return fd, name, err
}

func splitRel(rel string) (dir, name string) {
	rel = strings.Trim(rel, "/")
	i := strings.LastIndexByte(rel, '/')
	if i < 0 {
		return "", rel
	}
	return rel[:i], rel[i+1:]
}

// IsNoFollow reports whether err is a refusal of a symlink or an escape.
func IsNoFollow(err error) bool {
	return errors.Is(err, ErrEscape) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV)
}
