package nsinit

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Securebits is what the init locks before the command's exec: root
// gains no capability by executing anything (NOROOT), a change of user
// id changes no capability (NO_SETUID_FIXUP), capabilities cannot be
// kept across one (KEEP_CAPS off) nor raised as ambient ones, and none of
// it can be undone.
const Securebits = 1<<0 | 1<<1 | // SECBIT_NOROOT, _LOCKED
	1<<2 | 1<<3 | // SECBIT_NO_SETUID_FIXUP, _LOCKED
	1<<5 | // SECBIT_KEEP_CAPS_LOCKED
	1<<6 | 1<<7 // SECBIT_NO_CAP_AMBIENT_RAISE, _LOCKED

// dropCapabilities empties every capability set of the calling thread
// (bounding, ambient, inheritable, permitted, effective) and locks the
// securebits. It needs CAP_SETPCAP, which it drops last.
func dropCapabilities() {
	check("locking securebits", unix.Prctl(unix.PR_SET_SECUREBITS, Securebits, 0, 0, 0))
	for c := 0; c < 64; c++ {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if err == syscall.EINVAL { // past the kernel's last capability
			break
		}
		check("emptying the bounding set", err)
	}
	check("clearing ambient capabilities", unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0))
	var data [2]unix.CapUserData
	check("emptying the capability sets", unix.Capset(&unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}, &data[0]))
}

// loadSeccomp installs the filter read from fd (the sandbox's sealed
// memfd: an array of struct sock_filter; empty for no filter), then
// closes fd. no_new_privs must be set.
func loadSeccomp(fd int) {
	prog, ok := readFilter(fd, 4096, "the seccomp filter")
	if !ok {
		return
	}
	check("loading the seccomp filter", unix.Prctl(unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(prog)), 0, 0))
}

// readFilter reads a program of at most max bytes from fd and closes it;
// false for an empty one.
func readFilter(fd, max int, what string) (*unix.SockFprog, bool) {
	buf := make([]byte, max)
	n, err := unix.Pread(fd, buf, 0)
	check("reading "+what, err)
	unix.Close(fd)
	if n == 0 {
		return nil, false
	}
	if n%8 != 0 || n == len(buf) {
		fail("reading "+what, syscall.EINVAL)
	}
	return &unix.SockFprog{Len: uint16(n / 8), Filter: (*unix.SockFilter)(unsafe.Pointer(&buf[0]))}, true
}

// trapForJournal installs the journal's filter read from fd (JournalForm)
// with a listener of its own, sends the listener to tiny-go over the
// socket at sock, and closes all three: the command never holds it.
// After the sandbox's filter: an ERRNO of that one still wins over the
// journal's USER_NOTIF, whatever the order.
func trapForJournal(fd, sock int) {
	prog, ok := readFilter(fd, 8*4096, "the journal's filter")
	if !ok {
		fail("reading the journal's filter", syscall.EINVAL)
	}
	l, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(prog)))
	if e != 0 {
		fail("loading the journal's filter", e)
	}
	check("handing the journal's listener to tiny-go", unix.Sendmsg(sock, []byte{0}, unix.UnixRights(int(l)), nil, 0))
	unix.Close(int(l))
	unix.Close(sock)
}
