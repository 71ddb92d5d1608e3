// The errors a store reports for a file it cannot trust or a commit it
// refuses.

package store

import (
	"fmt"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// CorruptError refuses to open a session whose committed lines are not a
// valid session.
type CorruptError struct {
	Path       string
	Corruption *session.Corruption
}

func (e *CorruptError) Error() string {
	c := e.Corruption
	return fmt.Sprintf("session %s is corrupt: %s", e.Path, c.Describe())
}

// Unwrap returns the corruption.
func (e *CorruptError) Unwrap() error { return e.Corruption }

// RejectedError is a candidate transaction that the current state does not
// accept; nothing was written.
type RejectedError struct {
	ID         string
	Corruption *session.Corruption
}

func (e *RejectedError) Error() string {
	c := e.Corruption
	s := fmt.Sprintf("session %s: commit rejected: %s", e.ID, c.Code)
	if c.Seq > 0 {
		s += fmt.Sprintf(" (seq %d)", c.Seq)
	}
	if c.Detail != "" {
		s += ": " + c.Detail
	}
	return s
}

// Unwrap returns the corruption.
func (e *RejectedError) Unwrap() error { return e.Corruption }
