package sandbox

import (
	"errors"
	"os/exec"
)

// Overlay is Linux's view of a working directory over an overlay file
// system (overlay_linux.go); macOS has none, so commands never get one and
// checkpoints snapshot the tree before and after each command instead.
type Overlay struct {
	Lower, Upper, Work string
}

var errNoOverlay = errors.New("macOS has no overlay file system")

// OverlayRefusal says why commands cannot run over an overlay here.
func (s *Sandbox) OverlayRefusal() error { return errNoOverlay }

// StartOverlay never starts anything on macOS.
func (s *Sandbox) StartOverlay(*exec.Cmd, Overlay) error { return errNoOverlay }
