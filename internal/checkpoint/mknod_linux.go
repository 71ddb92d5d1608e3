package checkpoint

import "golang.org/x/sys/unix"

// mknodAt makes the node name in dir with mode (type and permissions).
func mknodAt(dir int, name, _ string, mode uint32) error {
	return unix.Mknodat(dir, name, mode, 0)
}
