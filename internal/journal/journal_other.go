//go:build !(linux && (amd64 || arm64))

package journal

import (
	"os"
	"os/exec"
)

// Session is a command running under the journal.
type Session struct{}

// Options says what a Supervision must never touch for the command.
type Options struct {
	Exclude  []string
	Writable func(abs string) bool
	Volatile bool
}

// Supervision journals the calls of a command started elsewhere.
type Supervision struct{}

// ChildMain does nothing where the journal is not supported.
func ChildMain() {}

// Start is not supported on this platform.
func Start(cmd *exec.Cmd, tree, dir string) (*Session, error) { return nil, ErrNotSupported }

// Wait is not supported on this platform.
func (s *Session) Wait() error { return ErrNotSupported }

// Filter is not supported on this platform.
func Filter() ([]byte, error) { return nil, ErrNotSupported }

// Attach is not supported on this platform; it closes listener.
func Attach(listener *os.File, tree, dir string, o Options) (*Supervision, error) {
	listener.Close()
	return nil, ErrNotSupported
}

// ReceiveListener is not supported on this platform.
func ReceiveListener(sock *os.File) (*os.File, error) { return nil, ErrNotSupported }

// Stop is not supported on this platform.
func (s *Supervision) Stop() error { return ErrNotSupported }

// Restore is not supported on this platform.
func Restore(dir string) error { return ErrNotSupported }
