// Command attacker makes, one at a time, the system calls a contained
// command must not get through (internal/attacks runs it inside tiny-go's
// commands). Each attempt prints one line, "<what>: <errno name>" or
// "<what>: ok", and the test reads the verdicts. Every attempt is chosen
// to be harmless where it succeeds (invalid arguments the kernel would
// refuse after the filter and the capability checks), except where
// succeeding is the point (a namespace, a handle, a device node).
package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: attacker <attack> [args]")
		os.Exit(2)
	}
	f, ok := attacks[os.Args[1]]
	if !ok {
		fmt.Fprintln(os.Stderr, "attacker: no attack", os.Args[1])
		os.Exit(2)
	}
	f(os.Args[2:])
}

// say prints the verdict of one attempt.
func say(what string, err error) {
	if err == nil {
		fmt.Printf("%s: ok\n", what)
		return
	}
	if e, ok := err.(syscall.Errno); ok {
		fmt.Printf("%s: %s\n", what, unix.ErrnoName(e))
		return
	}
	fmt.Printf("%s: %v\n", what, err)
}

func errno(e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

func raw(nr uintptr, a ...uintptr) error {
	var x [6]uintptr
	copy(x[:], a)
	_, _, e := unix.Syscall6(nr, x[0], x[1], x[2], x[3], x[4], x[5])
	return errno(e)
}

func arg(a []string, i int, def string) string {
	if i < len(a) {
		return a[i]
	}
	return def
}

var attacks = map[string]func([]string){
	"handle":      handle,
	"mknod":       mknod,
	"mount":       mount,
	"userns":      userns,
	"ptrace":      ptrace,
	"kernel":      kernel,
	"keys":        keys,
	"time":        clock,
	"abi":         abi,
	"caps":        caps,
	"tiocsti":     tiocsti,
	"personality": personality,
	"chroot":      chroot,
}

// handle: a file handle of a file in the tree, opened again from the
// mount: the way past the overlay to the real tree (CAP_DAC_READ_SEARCH).
func handle(a []string) {
	path := arg(a, 0, ".")
	h, mountID, err := unix.NameToHandleAt(unix.AT_FDCWD, path, 0)
	say("name_to_handle_at", err)
	_ = mountID
	if err != nil {
		// The classic forged handle: inode 2, the root of an ext4 file
		// system (the "shocker" escape).
		h = unix.NewFileHandle(1, []byte{2, 0, 0, 0, 0, 0, 0, 0})
	}
	fd, err := unix.OpenByHandleAt(unix.AT_FDCWD, h, unix.O_RDONLY)
	say("open_by_handle_at", err)
	if err == nil {
		unix.Close(fd)
	}
}

// mknod: a block and a char device, a FIFO and a socket node at a path.
func mknod(a []string) {
	dir := arg(a, 0, ".")
	say("mknod block", unix.Mknod(dir+"/blk", unix.S_IFBLK|0o600, int(unix.Mkdev(7, 0))))
	say("mknodat char", unix.Mknodat(unix.AT_FDCWD, dir+"/chr", unix.S_IFCHR|0o600, int(unix.Mkdev(1, 3))))
	say("mknod fifo", unix.Mknod(dir+"/fifo", unix.S_IFIFO|0o600, 0))
	say("mknodat socket", unix.Mknodat(unix.AT_FDCWD, dir+"/sock", unix.S_IFSOCK|0o600, 0))
	os.Remove(dir + "/fifo")
	os.Remove(dir + "/sock")
}

// mount: the old and new mount API, over the working directory.
func mount(a []string) {
	dir := arg(a, 0, ".")
	say("mount tmpfs", unix.Mount("none", dir, "tmpfs", 0, ""))
	say("umount2", unix.Unmount(dir, unix.MNT_DETACH))
	say("umount2 /proc", unix.Unmount("/proc", unix.MNT_DETACH))
	_, err := unix.Fsopen("tmpfs", 0)
	say("fsopen", err)
	_, err = unix.Fspick(unix.AT_FDCWD, dir, 0)
	say("fspick", err)
	_, err = unix.OpenTree(unix.AT_FDCWD, dir, unix.OPEN_TREE_CLONE)
	say("open_tree", err)
	say("move_mount", unix.MoveMount(-1, "", unix.AT_FDCWD, dir, 0))
	say("mount_setattr", raw(unix.SYS_MOUNT_SETATTR, ^uintptr(99), 0, 0, 0, 0)) // AT_FDCWD
	say("pivot_root", unix.PivotRoot(dir, dir))
}

// userns: a user namespace (full capabilities inside it), by unshare,
// clone and clone3, and setns into one.
func userns(a []string) {
	runtime.LockOSThread()
	say("unshare user", unix.Unshare(unix.CLONE_NEWUSER))
	say("unshare mount", unix.Unshare(unix.CLONE_NEWNS))
	say("unshare net", unix.Unshare(unix.CLONE_NEWNET))
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWUSER}
	say("clone user", unwrap(cmd.Run()))
	// clone3's flags are in memory: the filter answers ENOSYS for every
	// call (the kernel alone would say EINVAL to this one).
	say("clone3", raw(unix.SYS_CLONE3, 0, 0))
	fd, err := unix.Open("/proc/self/ns/user", unix.O_RDONLY, 0)
	if err == nil {
		err = unix.Setns(fd, 0)
	}
	say("setns", err)
}

func unwrap(err error) error {
	if pe, ok := err.(*os.SyscallError); ok {
		return pe.Err
	}
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// ptrace: a process of the command's own (or the pid given) traced, its
// memory read by process_vm_readv, its descriptors taken by pidfd_getfd.
func ptrace(a []string) {
	pid := 0
	if len(a) > 0 {
		fmt.Sscan(a[0], &pid)
	} else {
		cmd := exec.Command("/bin/sleep", "5")
		if err := cmd.Start(); err != nil {
			say("start a sibling", err)
			return
		}
		defer cmd.Process.Kill()
		pid = cmd.Process.Pid
	}
	runtime.LockOSThread()
	say("ptrace attach", unix.PtraceAttach(pid))
	say("ptrace seize", raw(unix.SYS_PTRACE, unix.PTRACE_SEIZE, uintptr(pid), 0, 0))
	var b [8]byte
	local := []unix.Iovec{{Base: &b[0], Len: 8}}
	remote := []unix.RemoteIovec{{Base: 0x400000, Len: 8}}
	_, err := unix.ProcessVMReadv(pid, local, remote, 0)
	say("process_vm_readv", err)
	_, err = unix.ProcessVMWritev(pid, local, remote, 0)
	say("process_vm_writev", err)
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err == nil {
		_, err = unix.PidfdGetfd(pidfd, 0, 0)
	}
	say("pidfd_getfd", err)
	say("kcmp", raw(unix.SYS_KCMP, uintptr(os.Getpid()), uintptr(pid), 0, 0, 0))
}

// kernel: the calls that reach into the kernel itself, each with
// arguments it would refuse after the permission checks.
func kernel([]string) {
	nonexistent, _ := unix.BytePtrFromString("/nonexistent/tiny-go-attack")
	var attr [128]byte
	say("bpf", raw(unix.SYS_BPF, unix.BPF_MAP_CREATE, uintptr(unsafe.Pointer(&attr[0])), 0))
	pa := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_CPU_CLOCK, Size: uint32(unsafe.Sizeof(unix.PerfEventAttr{}))}
	fd, err := unix.PerfEventOpen(&pa, 0, -1, -1, 0)
	say("perf_event_open", err)
	if err == nil {
		unix.Close(fd)
	}
	fd2, _, e := unix.Syscall(unix.SYS_USERFAULTFD, 0, 0, 0)
	say("userfaultfd", errno(e))
	if e == 0 {
		unix.Close(int(fd2))
	}
	say("kexec_load", raw(unix.SYS_KEXEC_LOAD, 0, 0, 0, 0xdead0000))
	say("kexec_file_load", raw(unix.SYS_KEXEC_FILE_LOAD, ^uintptr(0), ^uintptr(0), 0, 0, 0xdead0000))
	say("init_module", raw(unix.SYS_INIT_MODULE, 0, 0, 0))
	say("finit_module", raw(unix.SYS_FINIT_MODULE, ^uintptr(0), 0, 0xdead0000))
	say("delete_module", raw(unix.SYS_DELETE_MODULE, 0, 0))
	say("reboot", raw(unix.SYS_REBOOT, unix.LINUX_REBOOT_MAGIC1, 0, 0, 0))
	say("swapon", raw(unix.SYS_SWAPON, uintptr(unsafe.Pointer(nonexistent)), 0))
	say("syslog", raw(unix.SYS_SYSLOG, 10, 0, 0)) // the buffer's size
	say("acct", raw(unix.SYS_ACCT, uintptr(unsafe.Pointer(nonexistent))))
	say("quotactl", raw(unix.SYS_QUOTACTL, 0, 0, 0, 0))
	say("fanotify_init", raw(unix.SYS_FANOTIFY_INIT, 0, 0))
	var params [120]byte // struct io_uring_params
	fd3, _, e3 := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params[0])), 0)
	say("io_uring_setup", errno(e3))
	if e3 == 0 {
		unix.Close(int(fd3))
	}
	if runtime.GOARCH == "amd64" {
		say("iopl", raw(172, 3))            // SYS_IOPL
		say("ioperm", raw(173, 0x80, 1, 1)) // SYS_IOPERM
	}
}

// keys: the kernel's keyrings.
func keys([]string) {
	_, err := unix.KeyctlGetKeyringID(unix.KEY_SPEC_SESSION_KEYRING, false)
	say("keyctl", err)
	_, err = unix.AddKey("user", "tiny-go-attack", []byte("x"), unix.KEY_SPEC_PROCESS_KEYRING)
	say("add_key", err)
	_, err = unix.RequestKey("user", "tiny-go-attack", "", unix.KEY_SPEC_PROCESS_KEYRING)
	say("request_key", err)
}

// clock: setting the time, with values the kernel refuses after the
// permission check.
func clock([]string) {
	tv := unix.Timeval{Usec: 2_000_000}
	say("settimeofday", raw(unix.SYS_SETTIMEOFDAY, uintptr(unsafe.Pointer(&tv)), 0))
	ts := unix.Timespec{Nsec: -1}
	say("clock_settime", raw(unix.SYS_CLOCK_SETTIME, unix.CLOCK_REALTIME, uintptr(unsafe.Pointer(&ts))))
	say("clock_adjtime", raw(unix.SYS_CLOCK_ADJTIME, ^uintptr(0), 0))
}

// abi: the same kernel through other system call tables (x32 and i386
// on amd64).
func abi([]string) {
	if runtime.GOARCH == "amd64" {
		say("x32 getpid", raw(39|0x40000000))
		say("i386 getpid", i386())
	}
}

// caps: raising what was dropped.
func caps([]string) {
	say("ambient raise", unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_RAISE, unix.CAP_SYS_ADMIN, 0, 0))
	say("securebits unlock", unix.Prctl(unix.PR_SET_SECUREBITS, 0, 0, 0, 0))
	data := [2]unix.CapUserData{{Effective: 1 << unix.CAP_SYS_ADMIN, Permitted: 1 << unix.CAP_SYS_ADMIN}}
	say("capset", unix.Capset(&unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}, &data[0]))
	say("no_new_privs off", unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 0, 0, 0, 0))
	bits, err := unix.PrctlRetInt(unix.PR_GET_SECUREBITS, 0, 0, 0, 0)
	if err == nil {
		fmt.Printf("securebits: %#x\n", bits)
	}
}

// tiocsti: typing into the terminal the command's stdin is on (here: a
// descriptor of /dev/tty where there is one, else standard input).
func tiocsti([]string) {
	fd := 0
	if t, err := unix.Open("/dev/tty", unix.O_RDWR, 0); err == nil {
		fd = t
	}
	c := byte('#')
	say("TIOCSTI", raw(unix.SYS_IOCTL, uintptr(fd), unix.TIOCSTI, uintptr(unsafe.Pointer(&c))))
}

// personality: turning off address space randomisation.
func personality([]string) {
	say("personality ADDR_NO_RANDOMIZE", raw(unix.SYS_PERSONALITY, 0x0040000)) // ADDR_NO_RANDOMIZE
	say("personality query", raw(unix.SYS_PERSONALITY, 0xffffffff))
}

// chroot: the classic chroot escape (a chroot below the working
// directory, then ".." out of it).
func chroot(a []string) {
	dir := arg(a, 0, ".")
	os.Mkdir(dir+"/jail", 0o755)
	say("chroot", unix.Chroot(dir+"/jail"))
	os.Remove(dir + "/jail")
}
