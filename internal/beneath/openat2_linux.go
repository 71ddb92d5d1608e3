package beneath

import (
	"errors"

	"golang.org/x/sys/unix"
)

// openat2Dir opens rel beneath root with openat2, the kernel refusing any
// symlink or escape; tried is false where openat2 is missing, so the
// caller walks by hand.
func openat2Dir(root int, rel string) (fd int, tried bool, err error) {
	if noOpenat2.Load() {
		return -1, false, nil
	}
	fd, err = unix.Openat2(root, rel, &unix.OpenHow{
		Flags:   unix.O_DIRECTORY | unix.O_RDONLY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	switch {
	case err == nil:
		return fd, true, nil
	case errors.Is(err, unix.ENOSYS):
		noOpenat2.Store(true)
		return -1, false, nil
	default:
		return -1, true, wrap(rel, err)
	}
}
