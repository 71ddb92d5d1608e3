//go:build amd64 || arm64

package sandbox

import "golang.org/x/sys/unix"

// The seccomp filter every command runs under (docs/containment.md,
// "Capabilities and system calls"): it refuses, with EPERM, the system
// calls a contained program has no business making, the class that
// Docker's default profile and bubblewrap refuse. Most of them need a
// capability the command no longer has; the filter is the second line,
// and the only one for what needs none (a user namespace to regain
// capabilities, userfaultfd, TIOCSTI, the 32-bit ABIs).
//
// It is a classic BPF program, built here once and handed to the init as
// a sealed memfd: the static init only loads it.

const (
	retAllow = unix.SECCOMP_RET_ALLOW
	retEPERM = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	// clone3 passes its flags in memory, where a filter cannot look:
	// ENOSYS makes the C library fall back to clone, whose flags it can
	// (as Docker does).
	retENOSYS = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	retEACCES = unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)

	// nsFlags are the clone and unshare flags that make a namespace.
	nsFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWUSER |
		unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME

	// seccomp_data: nr at 0, arch at 4, the arguments from 16 (the low
	// word of each, on the little-endian architectures filtered here).
	offNr   = 0
	offArch = 4
	offArg0 = 16
)

// deniedEverywhere are refused on every architecture (numbers from
// x/sys/unix for the one being built).
var deniedEverywhere = []uintptr{
	// File handles reach any file of a mount, past the overlay.
	unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_NAME_TO_HANDLE_AT,
	// Mounts, old and new API.
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_CHROOT,
	unix.SYS_FSOPEN, unix.SYS_FSMOUNT, unix.SYS_FSCONFIG, unix.SYS_FSPICK,
	unix.SYS_MOVE_MOUNT, unix.SYS_OPEN_TREE, unix.SYS_OPEN_TREE_ATTR, unix.SYS_MOUNT_SETATTR,
	// Namespaces of other processes.
	unix.SYS_SETNS,
	// The kernel itself.
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD,
	unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_REBOOT,
	unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
	unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_SYSLOG, unix.SYS_ACCT,
	unix.SYS_QUOTACTL, unix.SYS_QUOTACTL_FD, unix.SYS_LOOKUP_DCOOKIE, unix.SYS_NFSSERVCTL,
	unix.SYS_FANOTIFY_INIT, unix.SYS_VHANGUP,
	// io_uring: a large kernel surface that bypasses the filter for every
	// operation it submits (Docker refuses it too; libuv and others fall
	// back to plain calls).
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	// The kernel's keyrings.
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	// Other processes' memory and descriptors.
	unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV,
	unix.SYS_PIDFD_GETFD, unix.SYS_KCMP,
	// The clock.
	unix.SYS_SETTIMEOFDAY, unix.SYS_CLOCK_SETTIME, unix.SYS_CLOCK_ADJTIME,
}

// Personalities a program may ask for (Docker's list): the query, Linux,
// and the harmless flags; not ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC and
// the like.
var allowedPersonalities = []uint32{0, 8, 0x20000, 0x20008, 0xffffffff}

// The terminal ioctls that push input into the terminal (bubblewrap
// refuses both): a command could type into tiny-go's shell.
var deniedIoctls = []uint32{unix.TIOCSTI, unix.TIOCLINUX}

// bpfProgram is a filter under construction.
type bpfProgram []unix.SockFilter

func (p *bpfProgram) add(code uint16, k uint32, jt, jf uint8) {
	*p = append(*p, unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k})
}

const (
	ldAbs   = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	jeq     = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	jge     = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	jset    = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	andK    = unix.BPF_ALU | unix.BPF_AND | unix.BPF_K
	retK    = unix.BPF_RET | unix.BPF_K
	argSize = 8
)

// deny refuses nr outright (the accumulator holds the number).
func (p *bpfProgram) deny(nr uintptr, ret uint32) {
	p.add(jeq, uint32(nr), 0, 1)
	p.add(retK, ret, 0, 0)
}

// argIn decides nr by its argument arg (masked when mask is not 0):
// match when it is one of vals, other when not. It reloads the number
// after, so it must be the last test of that number.
func (p *bpfProgram) argIn(nr uintptr, arg int, mask uint32, vals []uint32, match, other uint32) {
	body := 1 + len(vals) + 2
	if mask != 0 {
		body++
	}
	p.add(jeq, uint32(nr), 0, uint8(body))
	p.add(ldAbs, uint32(offArg0+arg*argSize), 0, 0)
	if mask != 0 {
		p.add(andK, mask, 0, 0)
	}
	for i, v := range vals {
		p.add(jeq, v, uint8(len(vals)-i), 0) // to the "match" return
	}
	p.add(retK, other, 0, 0)
	p.add(retK, match, 0, 0)
}

// flagsDenied refuses nr when its argument arg has any of flags.
func (p *bpfProgram) flagsDenied(nr uintptr, arg int, flags uint32) {
	p.add(jeq, uint32(nr), 0, 4)
	p.add(ldAbs, uint32(offArg0+arg*argSize), 0, 0)
	p.add(jset, flags, 0, 1)
	p.add(retK, retEPERM, 0, 0)
	p.add(retK, retAllow, 0, 0)
}

// seccompFilter is the filter for this architecture.
func seccompFilter() []unix.SockFilter { return buildFilter(false) }

// sealedFilter is the filter of a sealed review's commands: besides, a
// unix socket of their own is refused (EACCES). Landlock does not cover
// connect, so one could reach a socket outside the tree by its path (the
// container daemon's); socketpair still works, and the network namespace
// (sealNetwork) keeps abstract ones apart.
func sealedFilter() []unix.SockFilter { return buildFilter(true) }

func buildFilter(sealed bool) []unix.SockFilter {
	var p bpfProgram
	// Another ABI (i386 on amd64, arm32 on arm64) has other numbers.
	p.add(ldAbs, offArch, 0, 0)
	p.add(jeq, auditArch, 1, 0)
	p.add(retK, retEPERM, 0, 0)
	p.add(ldAbs, offNr, 0, 0)
	if x32Bit != 0 {
		p.add(jge, x32Bit, 0, 1)
		p.add(retK, retEPERM, 0, 0)
	}
	for _, nr := range append(deniedEverywhere, deniedArch...) {
		p.deny(nr, retEPERM)
	}
	p.deny(unix.SYS_CLONE3, retENOSYS)
	// Each of these loads an argument, so each ends the program.
	// CLONE_NEWTIME shares its bit with clone's exit signal (and clone
	// refuses it anyway).
	p.flagsDenied(unix.SYS_CLONE, 0, nsFlags&^unix.CLONE_NEWTIME)
	p.flagsDenied(unix.SYS_UNSHARE, 0, nsFlags)
	devices := []uint32{unix.S_IFCHR, unix.S_IFBLK}
	p.argIn(unix.SYS_MKNODAT, 2, unix.S_IFMT, devices, retEPERM, retAllow)
	if mknodNr != 0 {
		p.argIn(mknodNr, 1, unix.S_IFMT, devices, retEPERM, retAllow)
	}
	p.argIn(unix.SYS_PERSONALITY, 0, 0, allowedPersonalities, retAllow, retEPERM)
	p.argIn(unix.SYS_IOCTL, 1, 0, deniedIoctls, retEPERM, retAllow)
	if sealed {
		p.argIn(unix.SYS_SOCKET, 0, 0, []uint32{unix.AF_UNIX}, retEACCES, retAllow)
	}
	p.add(retK, retAllow, 0, 0)
	return p
}
