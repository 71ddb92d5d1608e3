package sandbox

import (
	"path/filepath"
	"syscall"

	"github.com/tiny-agent/tiny-go/internal/store"
)

// containment is Linux's namespaces (contain_linux.go), which macOS does
// not have: commands share the machine's processes. Only stateDir is
// used: the Seatbelt profile keeps it read-only (threadRO).
type containment struct {
	ns, threadRO bool
	stateDir     string
	disabled     bool
	// Unused here: what Linux's containment adds (the overlay's Landlock
	// rights, hidden paths) has no macOS counterpart.
	fsMask uint64
	hidden func() []string
	keyDir string
}

func (c *containment) warning() string { return "" }

// sealNetwork: the Seatbelt profile's network rule is the one macOS has.
func (c *containment) sealNetwork() error { return nil }

// stateDirOf is <workDir>/.tiny-agent, created when missing so the profile
// can name it, symlinks resolved as the roots are (a working directory
// under /tmp is under /private/tmp to Seatbelt and to CheckWrite); "" when
// it cannot be used.
func stateDirOf(workDir string) string {
	dir, err := store.EnsureStateDir(workDir)
	if err != nil {
		return ""
	}
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		return ""
	}
	return dir
}

// SignalGroup sends sig to process group pgid (no PID namespaces here).
func SignalGroup(pgid int, sig syscall.Signal) error {
	return syscall.Kill(-pgid, sig)
}

func handledFS(int) uint64 { return 0 }

func (c *containment) filterWarning() string { return "" }

// Hides reports whether Policy.Hidden's paths are hidden from commands:
// not on macOS, where only the read tool guards them.
func (s *Sandbox) Hides() bool { return false }
