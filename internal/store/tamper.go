package store

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// ErrTampered is matched (errors.Is) by the error of a commit refused
// because another program changed the session file.
var ErrTampered = errors.New("the session file was changed by another program")

// TamperedError reports that the open session file is no longer what this
// store committed: it was truncated, appended to, replaced or removed by
// another program. Nothing more is written to it.
type TamperedError struct {
	Path   string
	Reason string // what happened, in a few words
	Then   string // what the user can do, when there is one thing to say
}

func (e *TamperedError) Error() string {
	if e.Then != "" {
		return fmt.Sprintf("session file %s %s; stopping without writing more to it: %s", e.Path, e.Reason, e.Then)
	}
	return fmt.Sprintf("session file %s %s; stopping without writing more to it", e.Path, e.Reason)
}

// Is makes errors.Is(err, ErrTampered) true.
func (e *TamperedError) Is(target error) bool { return target == ErrTampered }

// checkFile verifies, before an append, that the open file is still the
// file at the session's path (same device and inode; the path is no
// symlink) and still has exactly the committed length. The flock keeps
// other tiny-go processes out, but not other programs.
func (s *Store) checkFile() error {
	var open, named unix.Stat_t
	if err := unix.Fstat(int(s.file.Fd()), &open); err != nil {
		return fmt.Errorf("session %s: stat %s: %w", s.id, s.path, err)
	}
	tampered := func(format string, a ...any) *TamperedError {
		return &TamperedError{Path: s.path, Reason: fmt.Sprintf(format, a...)}
	}
	err := unix.Lstat(s.path, &named)
	switch {
	case errors.Is(err, unix.ENOENT):
		return tampered("was removed or renamed")
	case err != nil:
		return fmt.Errorf("session %s: stat %s: %w", s.id, s.path, err)
	case named.Dev != open.Dev || named.Ino != open.Ino:
		return tampered("was replaced by another file")
	case open.Size < s.size:
		e := tampered("was truncated to %d bytes (%d were committed)", open.Size, s.size)
		e.Then = "the lines cut off cannot be restored; fork the session or start a new one"
		return e
	case open.Size > s.size:
		return tampered("was appended to (%d bytes, %d were committed)", open.Size, s.size)
	case stampOf(&open) != s.ledger.stamp:
		// Same file, same length, but written since: confirm with the
		// running digest (a `touch` changes the times, not the bytes).
		what, err := s.firstChange()
		if err != nil {
			return fmt.Errorf("session %s: read %s: %w", s.id, s.path, err)
		}
		if what != "" {
			return tampered("%s", what)
		}
		s.ledger.stamp = stampOf(&open)
	}
	return nil
}

// restamp records the file's stamp as this store's own write left it.
func (s *Store) restamp() error {
	var st unix.Stat_t
	if err := unix.Fstat(int(s.file.Fd()), &st); err != nil {
		return fmt.Errorf("stat %s: %w", s.path, err)
	}
	s.ledger.stamp = stampOf(&st)
	return nil
}
