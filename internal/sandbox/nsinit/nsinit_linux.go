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
// In a user namespace of its own (UserForm) it first writes its id maps.
// It makes every mount a slave (nothing propagates back to the host),
// mounts a procfs of the new PID namespace on /proc, binds the state
// directory read-only over itself (every mount it makes nosuid and nodev),
// empties every capability set and locks the securebits (caps.go),
// enforces the Landlock ruleset open as file descriptor <fd> (a single
// digit), loads the seccomp filter read from <fd>+1, and executes <path>. Any
// failure ends it with status 125 and one line on standard error: the
// command never runs unconfined.
package nsinit

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Argv0 marks the init.
const Argv0 = "tiny-go-nsinit"

// OverlayForm follows the descriptor digit (and UserForm) in the init of
// a command that runs over an overlay of its working directory, followed
// by the Landlock file system rights (decimal) to grant beneath the
// overlay once it is mounted, 0 for none. <work> is the overlay's
// workdir: the kernel makes <work>/work (and work/incompat/volatile/dirty
// for a volatile overlay) with mode 000 at each mount, and the init makes
// them 0700 (their owner is the init's uid, the command's), or a command
// without CAP_DAC_OVERRIDE that walks the tree through the state
// directory (find, gofmt -l, grep -r) fails on them:
//
//	argv: Argv0 <fd>o<rights> <state dir or ""> <lower> <mount options> <work> <path> <argv...>
const OverlayForm = "o"

// UserForm follows the descriptor digit in the init of a command in a
// user namespace of its own: the init first writes its uid and gid maps,
// the two arguments after the flags, itself (after denying setgroups):
// tiny-go, non-dumpable, may not write them.
//
//	argv: Argv0 <fd>u[o<rights>] <uid map> <gid map> <state dir or ""> ...
const UserForm = "u"

// JournalForm follows the descriptor digit (and UserForm), before
// OverlayForm, in the init of a command journaled by tiny-go (package
// journal): besides the ruleset at <fd> and the sandbox's filter at
// <fd>+1, the journal's seccomp program is at <fd>+2 (a memfd, struct
// sock_filter array) and a unix socket to tiny-go at <fd>+3. Once
// confined, after the sandbox's filter, the init installs the journal's
// with SECCOMP_FILTER_FLAG_NEW_LISTENER, sends the listener over the
// socket (SCM_RIGHTS, one byte), closes both, and execs the command.
// The static init knows it too, with a program under 4096 bytes and
// without OverlayForm.
//
//	argv: Argv0 <fd>[u]j[o<rights>] ...
const JournalForm = "j"

// journalFD is the journal's program descriptor (JournalForm), 0 for none.
var journalFD int

// HideEnv, in the init's environment, lists (one per line) the absolute
// paths to hide from the command: each existing file is covered by a
// bind mount of /dev/null, each directory by an empty read-only tmpfs.
// The static init does the same. It is not passed on to the command.
const HideEnv = "TINY_GO_NSINIT_HIDE"

// ExitSetup is the status of an init that could not set up.
const ExitSetup = 125

func init() {
	if len(os.Args) < 2 || os.Args[0] != Argv0 {
		return
	}
	flags, a := os.Args[1], os.Args[2:]
	if flags == "" {
		fail("bad arguments", syscall.EINVAL)
	}
	fd, flags := rulesetFD(flags[:1]), flags[1:]
	if strings.HasPrefix(flags, UserForm) {
		if len(a) < 5 { // the maps, and the shortest form after them
			fail("bad arguments", syscall.EINVAL)
		}
		writeIDMaps(a[0], a[1])
		flags, a = flags[len(UserForm):], a[2:]
	}
	if rest, ok := strings.CutPrefix(flags, JournalForm); ok {
		journalFD, flags = fd+2, rest
	}
	if rights, ok := strings.CutPrefix(flags, OverlayForm); ok {
		mask, err := strconv.ParseUint(rights, 10, 64)
		if err != nil || len(a) < 6 {
			fail("bad arguments", syscall.EINVAL)
		}
		runOverlay(fd, mask, a[0], a[1], a[2], a[3], a[4], a[5:])
	}
	if flags != "" || len(a) < 3 {
		fail("bad arguments", syscall.EINVAL)
	}
	mountBase(a[0])
	if journalFD != 0 {
		treeNoDevices()
	}
	hide()
	confineAndExec(fd, a[1], a[2:])
}

// treeNoDevices binds the working directory over itself nosuid and nodev:
// a journaled command works on the tree itself, not on an overlay (which
// is mounted so), and a device node planted in the tree must not open.
func treeNoDevices() {
	wd, err := syscall.Getwd()
	check("finding the working directory", err)
	check("binding "+wd, unix.Mount(wd, wd, "", unix.MS_BIND|unix.MS_REC, ""))
	var st unix.Statfs_t
	check("reading the flags of "+wd, unix.Statfs(wd, &st))
	flags := uintptr(st.Flags)&(unix.MS_RDONLY|unix.MS_NOEXEC|unix.MS_NOATIME|unix.MS_NODIRATIME) | unix.MS_NOSUID | unix.MS_NODEV
	if st.Flags&unix.ST_RELATIME != 0 {
		flags |= unix.MS_RELATIME
	}
	check("making "+wd+" nodev", unix.Mount("", wd, "", unix.MS_BIND|unix.MS_REMOUNT|flags, ""))
	check("entering "+wd, syscall.Chdir(wd))
}

func rulesetFD(fdArg string) int {
	if len(fdArg) != 1 || fdArg[0] < '3' || fdArg[0] > '8' {
		fail("bad ruleset descriptor", syscall.EINVAL)
	}
	return int(fdArg[0] - '0')
}

// writeIDMaps maps the user's own ids in the init's user namespace.
func writeIDMaps(uidMap, gidMap string) {
	for _, f := range [][2]string{{"setgroups", "deny"}, {"uid_map", uidMap}, {"gid_map", gidMap}} {
		fd, err := unix.Open("/proc/self/"+f[0], unix.O_WRONLY|unix.O_CLOEXEC, 0)
		if err == nil {
			_, err = unix.Write(fd, []byte(f[1]))
			unix.Close(fd)
		}
		check("writing /proc/self/"+f[0], err)
	}
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
	flags := uintptr(st.Flags)&(unix.MS_NOEXEC|unix.MS_NOATIME|unix.MS_NODIRATIME) | unix.MS_NOSUID | unix.MS_NODEV
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
func runOverlay(fd int, rights uint64, state, lower, opts, work, path string, argv []string) {
	mountBase("")
	clone := -1
	if state != "" {
		var err error
		clone, err = unix.OpenTree(unix.AT_FDCWD, state, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
		check("cloning the state directory's mount", err)
	}
	// work may lie beneath lower, where the overlay mounted over it would
	// answer ELOOP: it is opened before.
	wfd, err := unix.Open(work, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	check("making the overlay's work directory readable", err)
	check("mounting the overlay of "+lower, unix.Mount("overlay", lower, "overlay", unix.MS_NOSUID|unix.MS_NODEV, opts))
	for _, dir := range workDirs {
		if err := unix.Fchmodat(wfd, dir, 0o700, 0); err != unix.ENOENT {
			check("making the overlay's work directory readable", err)
		}
	}
	unix.Close(wfd)
	if rights != 0 {
		allowBeneath(fd, rights, lower)
	}
	if clone >= 0 {
		check("binding "+state+" over the overlay", unix.MoveMount(clone, "", unix.AT_FDCWD, state, unix.MOVE_MOUNT_F_EMPTY_PATH))
		unix.Close(clone)
		readOnly(state)
	}
	hide()
	confineAndExec(fd, path, argv)
}

// workDirs are what the kernel makes with mode 000 in an overlay's
// workdir (fs/overlayfs/super.c), a missing one skipped (incompat: only
// for a volatile overlay; index=off makes no index).
var workDirs = []string{"work", "work/incompat", "work/incompat/volatile", "work/incompat/volatile/dirty"}

// allowBeneath adds to the ruleset fd a rule granting rights beneath dir,
// the overlay's root now: the rule the ruleset has for the working
// directory is hidden by the mount over it.
func allowBeneath(fd int, rights uint64, dir string) {
	dfd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	check("opening the overlay of "+dir, err)
	attr := unix.LandlockPathBeneathAttr{Allowed_access: rights, Parent_fd: int32(dfd)}
	if _, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(fd), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&attr)), 0, 0, 0); e != 0 {
		fail("allowing writes beneath the overlay", e)
	}
	unix.Close(dfd)
}

// confineAndExec drops what the command must not have, enforces Landlock
// and becomes the command.
func confineAndExec(fd int, path string, argv []string) {
	// The working directory may lie under the state directory: look it
	// up again, so it is on the read-only mount.
	if wd, err := syscall.Getwd(); err == nil {
		check("entering "+wd, syscall.Chdir(wd))
	}
	netListen() // needs CAP_NET_ADMIN
	dropCapabilities()
	check("setting no_new_privs", unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(fd), 0, 0); e != 0 {
		fail("enforcing Landlock", e)
	}
	unix.Close(fd)
	loadSeccomp(fd + 1)
	if journalFD != 0 {
		trapForJournal(journalFD, journalFD+1)
	}
	err := syscall.Exec(path, argv, withoutInitEnv(syscall.Environ()))
	status := 126
	if err == syscall.ENOENT {
		status = 127
	}
	os.Stderr.WriteString("tiny-go: " + path + ": " + err.Error() + "\n")
	os.Exit(status)
}

// hide covers the paths of HideEnv; a path that does not exist (any
// more) is skipped, and one that cannot be covered stops the command.
func hide() {
	list, ok := syscall.Getenv(HideEnv)
	if !ok {
		return
	}
	for p := range strings.SplitSeq(list, "\n") {
		var st unix.Stat_t
		if p == "" || unix.Stat(p, &st) != nil {
			continue
		}
		if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			check("hiding "+p, unix.Mount("tmpfs", p, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0555"))
			continue
		}
		check("hiding "+p, unix.Mount("/dev/null", p, "", unix.MS_BIND, ""))
	}
}

// withoutInitEnv is env without what was meant for the init.
func withoutInitEnv(env []string) []string {
	out := env[:0:0]
	for _, e := range env {
		if !strings.HasPrefix(e, HideEnv+"=") && !strings.HasPrefix(e, NetEnv+"=") {
			out = append(out, e)
		}
	}
	return out
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
