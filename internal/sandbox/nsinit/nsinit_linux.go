// Package nsinit is the first program of a command's namespaces when the
// sandbox starts it through tiny-go's own binary (see sandbox/contain.go):
// any binary that links the sandbox becomes the init when started with
// Argv0 as its argv[0]. The check runs in this package's init, which
// imports almost nothing, so it runs before the initialisation of the
// heavier packages of the binary.
//
// On linux/amd64 the sandbox runs the same steps as a static program of a
// few hundred bytes instead (Program, from elf/init_amd64.asm), started
// from a sealed memfd: a Go program's start alone costs milliseconds.
//
// The init mounts what the command needs and confines itself, then
// replaces itself with the command, which becomes PID 1 of its namespace:
//
//	argv: Argv0 <fd> <state dir or ""> <path> <argv of the command...>
//
// It makes every mount a slave (nothing propagates back to the host),
// mounts a procfs of the new PID namespace on /proc, binds the state
// directory read-only over itself, drops CAP_SYS_PTRACE from the bounding
// set and clears the ambient capabilities, enforces the Landlock ruleset
// open as file descriptor <fd> (a single digit), and executes <path>. Any
// failure ends it with status 125 and one line on standard error: the
// command never runs unconfined.
package nsinit

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// Argv0 marks the init.
const Argv0 = "tiny-go-nsinit"

// OverlayForm follows the descriptor digit in the init of a command that
// runs over an overlay of its working directory:
//
//	argv: Argv0 <fd>o <state dir or ""> <lower> <mount options> <path> <argv...>
const OverlayForm = "o"

// ExitSetup is the status of an init that could not set up.
const ExitSetup = 125

func init() {
	if len(os.Args) >= 5 && os.Args[0] == Argv0 {
		if a := os.Args[1:]; len(a[0]) == 2 && a[0][1:] == OverlayForm {
			if len(a) < 6 {
				fail("bad arguments", syscall.EINVAL)
			}
			runOverlay(a[0][:1], a[1], a[2], a[3], a[4], a[5:])
		}
		run(os.Args[1:])
	}
}

func run(args []string) {
	fdArg, state, path, argv := args[0], args[1], args[2], args[3:]
	fd := rulesetFD(fdArg)
	mountBase(state)
	confineAndExec(fd, path, argv)
}

func rulesetFD(fdArg string) int {
	if len(fdArg) != 1 || fdArg[0] < '3' || fdArg[0] > '9' {
		fail("bad ruleset descriptor", syscall.EINVAL)
	}
	return int(fdArg[0] - '0')
}

// mountBase makes mounts slaves, mounts /proc and binds state read-only.
func mountBase(state string) {
	check("making mounts slaves", unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""))
	check("mounting /proc", unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""))
	if state != "" {
		check("binding "+state, unix.Mount(state, state, "", unix.MS_BIND, ""))
		readOnly(state)
	}
}

// readOnly remounts the bind mount at state read-only, keeping the flags
// of the mount it is on: a user namespace may not clear them.
func readOnly(state string) {
	var st unix.Statfs_t
	check("reading the flags of "+state, unix.Statfs(state, &st))
	flags := uintptr(st.Flags) & (unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC | unix.MS_NOATIME | unix.MS_NODIRATIME)
	if st.Flags&unix.ST_RELATIME != 0 {
		flags |= unix.MS_RELATIME
	}
	check("making "+state+" read-only", unix.Mount("", state, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|flags, ""))
}

// runOverlay is run with the working directory's overlay mounted over it
// (lower) before the command starts. The upper layer lies in the state
// directory, so the overlay is mounted before that is made read-only (an
// overlay refuses a read-only upper layer); the state directory is then
// mounted on top of the overlay, read-only, so the command can neither
// write it nor meet the kernel's ELOOP for the upper layer seen through
// the overlay.
func runOverlay(fdArg, state, lower, opts, path string, argv []string) {
	fd := rulesetFD(fdArg)
	mountBase("")
	clone := -1
	if state != "" {
		var err error
		clone, err = unix.OpenTree(unix.AT_FDCWD, state, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
		check("cloning the state directory's mount", err)
	}
	check("mounting the overlay of "+lower, unix.Mount("overlay", lower, "overlay", 0, opts))
	if clone >= 0 {
		check("binding "+state+" over the overlay", unix.MoveMount(clone, "", unix.AT_FDCWD, state, unix.MOVE_MOUNT_F_EMPTY_PATH))
		unix.Close(clone)
		readOnly(state)
	}
	confineAndExec(fd, path, argv)
}

// confineAndExec drops what the command must not have, enforces Landlock
// and becomes the command.
func confineAndExec(fd int, path string, argv []string) {
	// The working directory may lie under the state directory: look it
	// up again, so it is on the read-only mount.
	if wd, err := syscall.Getwd(); err == nil {
		check("entering "+wd, syscall.Chdir(wd))
	}
	check("dropping CAP_SYS_PTRACE", unix.Prctl(unix.PR_CAPBSET_DROP, unix.CAP_SYS_PTRACE, 0, 0, 0))
	check("clearing ambient capabilities", unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0))
	check("setting no_new_privs", unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(fd), 0, 0); e != 0 {
		fail("enforcing Landlock", e)
	}
	unix.Close(fd)
	err := syscall.Exec(path, argv, syscall.Environ())
	status := 126
	if err == syscall.ENOENT {
		status = 127
	}
	os.Stderr.WriteString("tiny-go: " + path + ": " + err.Error() + "\n")
	os.Exit(status)
}

func check(step string, err error) {
	if err != nil {
		fail(step, err)
	}
}

func fail(step string, err error) {
	os.Stderr.WriteString("tiny-go: namespace init: " + step + ": " + err.Error() + "\n")
	os.Exit(ExitSetup)
}

// Program is the init as a small static executable for this
// architecture, or nil where there is none (then the init is the binary
// itself, started with Argv0).
func Program() []byte { return program }
