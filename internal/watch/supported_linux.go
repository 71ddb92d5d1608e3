package watch

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// supported refuses file systems where changes made elsewhere never reach
// inotify. TINY_INOTIFY=off answers as macOS does, so Linux tests run the
// checkpoints a Mac takes.
func supported(root string) error {
	if os.Getenv("TINY_INOTIFY") == "off" {
		return ErrNoInotify
	}
	var st unix.Statfs_t
	if err := unix.Statfs(root, &st); err != nil {
		return err
	}
	switch uint32(st.Type) {
	case unix.NFS_SUPER_MAGIC, unix.SMB_SUPER_MAGIC, 0xFF534D42 /* cifs */, 0xFE534D42, /* smb2 */
		unix.FUSE_SUPER_MAGIC, unix.V9FS_MAGIC, unix.AFS_SUPER_MAGIC, 0x6B414653 /* kafs */, unix.CODA_SUPER_MAGIC:
		return fmt.Errorf("%w (file system type %#x)", ErrUnsupported, st.Type)
	}
	return nil
}
