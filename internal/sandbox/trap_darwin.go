package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
)

var errNoTrap = errors.New("macOS has no seccomp: commands cannot be journaled")

// TrapRefusal says why StartTrapped cannot start commands here.
func (s *Sandbox) TrapRefusal() error { return errNoTrap }

// StartTrapped never starts anything on macOS.
func (s *Sandbox) StartTrapped(*exec.Cmd, []byte) (*os.File, error) { return nil, errNoTrap }

// JournalExclude is the state folder (nothing is journaled on macOS).
func (s *Sandbox) JournalExclude(workDir string) []string {
	return []string{filepath.Join(workDir, ".tiny-agent")}
}

// MayWrite is false: nothing is journaled on macOS.
func (s *Sandbox) MayWrite(string) bool { return false }
