//go:build !(linux && (amd64 || arm64))

package journal

import "os/exec"

// Session is a command running under the journal.
type Session struct{}

// ChildMain does nothing where the journal is not supported.
func ChildMain() {}

// Start is not supported on this platform.
func Start(cmd *exec.Cmd, tree, dir string) (*Session, error) { return nil, ErrNotSupported }

// Wait is not supported on this platform.
func (s *Session) Wait() error { return ErrNotSupported }

// Restore is not supported on this platform.
func Restore(dir string) error { return ErrNotSupported }
