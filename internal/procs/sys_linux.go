package procs

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// DiesWithUs makes a process started with attr receive SIGKILL when
// tiny-go dies, even of a SIGKILL (Pdeathsig; its thread lives as long as
// tiny-go, see sandbox). It returns attr.
func DiesWithUs(attr *syscall.SysProcAttr) *syscall.SysProcAttr {
	attr.Pdeathsig = syscall.SIGKILL
	return attr
}

// killVerified sends SIGKILL to pid only if it is still the process that
// started at ticks: a pidfd pins the process, so the check and the signal
// are about the same one even if the pid is recycled in between.
func killVerified(pid int, ticks uint64) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	if st, err := ReadStat(pid); err != nil || st.StartTicks != ticks || st.Dead() {
		return false
	}
	return unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0) == nil
}

// BecomeSubreaper makes this process the child subreaper of everything it
// starts: a descendant whose parent exits (a double fork, `setsid cmd &`
// of a shell that returned) is re-parented to tiny-go instead of init, so
// it stays a descendant that Close can find even if it cleared its
// environment. For the tiny-go process only (cmd/tiny-go).
func BecomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// isSubreaper reports whether this process is a child subreaper.
func isSubreaper() bool {
	v := new(int32) // on the heap: it does not move while the kernel writes it
	err := unix.Prctl(unix.PR_GET_CHILD_SUBREAPER, uintptr(unsafe.Pointer(v)), 0, 0, 0)
	return err == nil && *v != 0
}
