//go:build !linux

package procs

import (
	"errors"
	"runtime"
	"syscall"
)

// DiesWithUs returns attr: only Linux kills a child when its parent dies,
// so elsewhere what a command started may outlive a killed tiny-go.
func DiesWithUs(attr *syscall.SysProcAttr) *syscall.SysProcAttr { return attr }

// killVerified cannot tell a recycled pid from the process it was without
// /proc, so it kills nothing.
func killVerified(int, uint64) bool { return false }

// BecomeSubreaper is Linux only: orphans of commands go to launchd.
func BecomeSubreaper() error { return errors.New("no child subreaper on " + runtime.GOOS) }

func isSubreaper() bool { return false }
