//go:build !linux

package testenv

import (
	"errors"
	"runtime"
)

var errNoMount = errors.New("no overlay mounts on " + runtime.GOOS)

// MountOverlay is Linux only.
func MountOverlay(string, string) error { return errNoMount }

// Unmount is Linux only.
func Unmount(string) error { return errNoMount }
