package testenv

import "syscall"

// MountOverlay mounts an overlay with opts on dir, as a fleet worker lays
// out a workspace (tests that need root).
func MountOverlay(dir, opts string) error {
	return syscall.Mount("overlay", dir, "overlay", 0, opts)
}

// Unmount takes the topmost mount off dir.
func Unmount(dir string) error { return syscall.Unmount(dir, syscall.MNT_DETACH) }
