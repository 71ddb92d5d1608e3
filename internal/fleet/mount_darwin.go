package fleet

import (
	"errors"
	"syscall"
)

// Workers run on Linux: macOS has neither overlays nor a tmpfs to mount,
// so a base is copied and the cache stays on disk (both said already).
var errNoMount = errors.New("macOS has no overlay or tmpfs mounts")

func mountOverlay(string, string) error { return errNoMount }
func unmountDetach(string) error        { return errNoMount }
func onTmpfs(string) bool               { return false }
func mountTmpfs(string, string) error   { return errNoMount }
func ctimeOf(st *syscall.Stat_t) int64  { return st.Ctimespec.Nano() }
