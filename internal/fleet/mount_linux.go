package fleet

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// mountOverlay mounts an overlay with opts on repo (cache.go).
func mountOverlay(repo, opts string) error {
	return unix.Mount("overlay", repo, "overlay", 0, opts)
}

// unmountDetach takes the topmost mount off dir.
func unmountDetach(dir string) error { return unix.Unmount(dir, unix.MNT_DETACH) }

// onTmpfs reports whether dir is a tmpfs.
func onTmpfs(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Type == unix.TMPFS_MAGIC
}

// mountTmpfs mounts a tmpfs of size on dir.
func mountTmpfs(dir, size string) error {
	return unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NODEV|unix.MS_NOSUID, "mode=0755,size="+size)
}

func ctimeOf(st *syscall.Stat_t) int64 { return st.Ctim.Nano() }
