package secrets

import "golang.org/x/sys/unix"

// ProtectMemory makes this process non-dumpable: processes of the same
// user without CAP_SYS_PTRACE (commands run with --sandbox off, or on a
// kernel without Landlock) can no longer read its memory, where the keys
// live, through ptrace or /proc/<pid>/mem, nor its /proc/<pid>/environ.
// Root still can. Commands it starts are dumpable again after their exec.
func ProtectMemory() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}
