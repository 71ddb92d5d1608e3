package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/sandbox/nsinit"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// Containment is what the sandbox adds to Landlock when the kernel allows
// it (root, or unprivileged user namespaces; see docs/containment.md).
// Every command starts in a new PID and mount namespace (and a user
// namespace when tiny-go is not root) through an init (nsinit) that:
//
//   - mounts a procfs of the new PID namespace on /proc, so tiny-go and
//     every other process of the machine are invisible to the command;
//   - binds .tiny-agent (sessions, sidecars, checkpoints, approvals) over
//     itself read-only, so no command can rewrite tiny-go's history;
//   - empties every capability set and locks the securebits;
//   - enforces the Landlock ruleset, loads the seccomp filter, and
//     becomes the command.
//
// The command is PID 1 of its namespace: when it ends, is killed, or
// tiny-go is SIGKILLed (it carries the caller's Pdeathsig), the kernel
// kills every process in the namespace, however it detached itself.
//
// Without namespaces, commands start from the confining thread as before:
// Landlock and the seccomp filter, and as root .tiny-agent read-only and
// no capability through that thread's own mount namespace, bounding set
// and securebits (caps.go).
type containment struct {
	ns         bool     // commands start through the init
	userNS     bool     // in a user namespace of their own (not root, or root without CAP_SYS_ADMIN)
	stateDir   string   // bound read-only for commands, or ""
	ruleset    *os.File // the Landlock ruleset the init enforces
	seccomp    *os.File // the seccomp filter the init loads (seccomp.go)
	noFilter   error    // why the kernel refused the filter, or nil
	initPath   string   // the init: the static program, or tiny-go's binary (nsinit)
	program    *os.File // the memfd of the static program, or nil
	threadRO   bool     // the confining thread sees stateDir read-only
	noPtrace   bool     // the confining thread emptied its bounding set (caps.go)
	lostReason string   // why namespaces were refused, for the warning
	disabled   bool     // Policy.NoNamespaces
	noNet      bool     // each command in a network namespace with nothing in it (sealNetwork)
	// newRuleset makes a ruleset like ruleset for one command over an
	// overlay: its init adds the overlay's root to it (overlay.go).
	newRuleset func() (*os.File, error)
	// fsMask is the file system rights the rulesets restrict.
	fsMask uint64

	// hiding is Policy.Hidden (hide.go), set after the probe.
	hiding
}

// setUpThread runs on the confining thread before Landlock (which forbids
// mount changes): as root, a private mount namespace with stateDir
// read-only (write and edit run there, and commands when namespaces are
// refused), and the capability drop. Errors are not fatal: what could not
// be done is named in the warning.
func (c *containment) setUpThread() {
	if os.Geteuid() != 0 {
		return
	}
	// The bounding set and ambient capabilities are per thread and
	// inherited by everything this thread starts.
	if dropThreadCapabilities() == nil {
		c.noPtrace = true
	}
	if c.stateDir != "" && readOnlyOnThread(c.stateDir) == nil {
		c.threadRO = true
	}
}

func readOnlyOnThread(dir string) error {
	if err := unix.Unshare(unix.CLONE_FS | unix.CLONE_NEWNS); err != nil {
		return err
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return err
	}
	if err := unix.Mount(dir, dir, "", unix.MS_BIND, ""); err != nil {
		return err
	}
	return unix.Mount("", dir, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, "")
}

// probe checks, once, that commands can start in namespaces: by starting
// a command through the init, from the launching thread.
func (c *containment) probe(launch func(*exec.Cmd) error) {
	if c.disabled {
		c.lostReason = "namespaces disabled"
		return
	}
	c.userNS = os.Geteuid() != 0
	err := c.probeInits(launch)
	if err != nil && !c.userNS {
		// Root without CAP_SYS_ADMIN (a container's root, usually) may
		// still create a user namespace, in which it has it.
		c.userNS = true
		if c.probeInits(launch) == nil {
			return
		}
		c.userNS = false
	}
	if err != nil {
		c.ns = false
		c.lostReason = err.Error()
	}
}

// probeInits tries the static init where there is one, else (or when
// the kernel refuses to execute it) tiny-go's own binary; it returns the
// first init's error.
func (c *containment) probeInits(launch func(*exec.Cmd) error) error {
	var err error
	if f, ferr := programFile(nsinit.Program()); ferr == nil {
		c.program = f
		c.initPath = fmt.Sprintf("/proc/self/fd/%d", f.Fd())
		if err = c.try(launch); err == nil {
			return nil
		}
		f.Close()
		c.program = nil
	}
	c.initPath = "/proc/self/exe"
	if err2 := c.try(launch); err2 != nil {
		if err == nil {
			err = err2
		}
		return err
	}
	return nil
}

// goInitOnly makes the probe skip the static init (tests of the Go one).
var goInitOnly = false

// try starts `/bin/sh -c :` through the init at c.initPath (/bin/sh is the
// one program every Linux has there); c.ns tells whether it worked, and
// the error names why not.
func (c *containment) try(launch func(*exec.Cmd) error) error {
	cmd := exec.Command("/bin/sh", "-c", ":")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	c.ns = true
	err := c.wrap(cmd)
	if err == nil {
		err = launch(cmd)
		if err == nil {
			err = cmd.Wait()
		} else {
			err = unwrapErrno(err)
		}
	}
	if err != nil {
		c.ns = false
		return errors.New(c.refusal(err, strings.TrimSpace(stderr.String())))
	}
	return nil
}

// programFile is a sealed memfd holding program, kept at a high descriptor
// number so that no descriptor the child is handed replaces it before the
// exec through /proc/self/fd.
func programFile(program []byte) (*os.File, error) {
	if program == nil || goInitOnly {
		return nil, errors.New("no static init for this architecture")
	}
	fd, err := unix.MemfdCreate("tiny-go-nsinit", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING|unix.MFD_EXEC)
	if err != nil {
		// Kernels before 6.3 know no MFD_EXEC.
		fd, err = unix.MemfdCreate("tiny-go-nsinit", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
		if err != nil {
			return nil, err
		}
	}
	defer unix.Close(fd)
	if _, err := unix.Write(fd, program); err != nil {
		return nil, err
	}
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SEAL|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE); err != nil {
		return nil, err
	}
	high, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 100)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(high), "tiny-go-nsinit"), nil
}

// refusal is the reason namespaces were refused, naming the setting that
// refuses them where one does.
func (c *containment) refusal(err error, stderr string) string {
	if c.userNS {
		for _, s := range []struct{ file, want, why string }{
			{"/proc/sys/kernel/unprivileged_userns_clone", "0", "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone=0)"},
			{"/proc/sys/user/max_user_namespaces", "0", "user namespaces are disabled (user.max_user_namespaces=0)"},
			{"/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1", "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1)"},
		} {
			if b, e := os.ReadFile(s.file); e == nil && strings.TrimSpace(string(b)) == s.want {
				return s.why
			}
		}
	}
	what := "namespaces refused"
	if c.userNS {
		what = "user namespaces refused"
	}
	if stderr != "" {
		return fmt.Sprintf("%s: %s", what, strings.TrimPrefix(stderr, "tiny-go: "))
	}
	return fmt.Sprintf("%s (%v)", what, err)
}

func unwrapErrno(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return err
}

// wrap makes cmd start through the init in new namespaces. The caller's
// SysProcAttr (process group or session, Pdeathsig) applies to the init,
// which becomes the command: what the caller signals and waits for.
func (c *containment) wrap(cmd *exec.Cmd) error {
	return c.wrapInit(cmd, c.ruleset, "")
}

// wrapInit is wrap with the Landlock ruleset rs, form after the
// descriptor digit and extra arguments after the state directory
// (overlay.go).
func (c *containment) wrapInit(cmd *exec.Cmd, rs *os.File, form string, extra ...string) error {
	if cmd.Err != nil {
		return nil // Start reports it
	}
	// Report a command that cannot be executed as Start would, rather
	// than as an exit status of the init.
	if err := unix.Access(cmd.Path, unix.X_OK); err != nil {
		return &os.PathError{Op: "fork/exec", Path: cmd.Path, Err: err}
	}
	fd := 3 + len(cmd.ExtraFiles)
	if fd > 8 {
		return errors.New("sandbox: too many ExtraFiles for the namespace init")
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, rs, c.seccomp) // the filter at fd+1
	flags := string(rune('0' + fd))
	var maps []string
	if c.userNS {
		// The init writes its own id maps (nsinit.UserForm): tiny-go is
		// non-dumpable, so the kernel refuses it the child's maps, which
		// the child may write once it has executed the init.
		flags += nsinit.UserForm
		uid, gid := os.Geteuid(), os.Getegid()
		maps = []string{fmt.Sprintf("%d %d 1\n", uid, uid), fmt.Sprintf("%d %d 1\n", gid, gid)}
	}
	args := append(append([]string{nsinit.Argv0, flags + form}, maps...), c.stateDir)
	args = append(append(append(args, extra...), cmd.Path), cmd.Args...)
	cmd.Path, cmd.Args = c.initPath, args
	if env, ok := c.hideThrough(cmd.Env); ok {
		cmd.Env = env
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	a := cmd.SysProcAttr
	a.Cloneflags |= unix.CLONE_NEWPID | unix.CLONE_NEWNS
	if a.Pdeathsig == 0 {
		a.Pdeathsig = syscall.SIGKILL
	}
	if c.userNS {
		// The user keeps its ids inside; the init keeps what it needs to
		// mount and to drop a capability across its exec, and clears
		// them before the command's.
		a.Cloneflags |= unix.CLONE_NEWUSER
		a.AmbientCaps = append(a.AmbientCaps, unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP)
	}
	if c.noNet {
		a.Cloneflags |= unix.CLONE_NEWNET
	}
	if hasEnv(cmd.Env, nsinit.NetEnv) {
		// --network rules (netrules.go): only the Go init makes the
		// proxy's socket, and it needs CAP_NET_ADMIN to bring lo up.
		cmd.Path = "/proc/self/exe"
		a.Cloneflags |= unix.CLONE_NEWNET
		if c.userNS {
			a.AmbientCaps = append(a.AmbientCaps, unix.CAP_NET_ADMIN)
		}
	}
	return nil
}

// sealNetwork gives each command a network namespace of its own with
// nothing in it, not even lo up: no network at all, UDP, ICMP and
// abstract unix sockets included (Landlock's network rules cover TCP
// only), and a filter that refuses it a unix socket (sealedFilter). A
// sealed review's commands (Policy.Sealed with NetworkOff).
func (c *containment) sealNetwork() error {
	c.noNet = c.ns
	if !c.ns || c.noFilter != nil || c.seccomp == nil {
		return nil
	}
	f, err := sealedSeccompFile()
	if err != nil {
		return err
	}
	c.seccomp.Close()
	c.seccomp = f
	return nil
}

// warning names what is lost when containment is partial; "" when none.
func (c *containment) warning() string {
	if c == nil || c.ns {
		return ""
	}
	lost := []string{
		"commands see tiny-go and every other process in /proc",
		"commands may outlive tiny-go when it is killed (until the next start reaps them)",
	}
	if !c.threadRO {
		lost = append(lost, "commands can write .tiny-agent")
	}
	if os.Geteuid() != 0 {
		// Root's key is another id's (statekey), out of a command's reach.
		lost = append(lost, "commands can read tiny-go's state key, and with it seal forged state")
	}
	if !c.noPtrace && os.Geteuid() == 0 {
		lost = append(lost, "root commands can read tiny-go's memory")
	}
	return fmt.Sprintf("no namespaces for commands (%s): %s", c.lostReason, strings.Join(lost, "; "))
}

// stateDirOf is <workDir>/.tiny-agent, created when missing so it can be
// mounted read-only from the start; "" when it cannot be used.
func stateDirOf(workDir string) string {
	dir, err := store.EnsureStateDir(workDir)
	if err != nil {
		return ""
	}
	return dir
}

// SignalGroup sends sig to process group pgid as kill(-pgid, sig) does,
// and makes it act on the group's leader when the leader is the first
// process of a PID namespace (a command the sandbox started): the kernel
// delivers to such a process only the signals it catches (and SIGKILL),
// so a command that would have died of sig by default is killed with
// SIGKILL instead, which ends its namespace as sig would have ended it.
// That SIGKILL comes first: sent after the group's sig, it left the shell
// a window in which its killed foreground job had ended and the next
// command of its line ran (`sleep 5; touch after` made after). It returns
// the error of the first kill.
func SignalGroup(pgid int, sig syscall.Signal) error {
	if diesOf(sig) && namespaceInitIgnoring(pgid, sig) {
		// The whole namespace, the group with it, dies with its init.
		return syscall.Kill(pgid, syscall.SIGKILL)
	}
	return syscall.Kill(-pgid, sig)
}

// diesOf reports whether sig terminates a process that does not handle it.
func diesOf(sig syscall.Signal) bool {
	switch sig {
	case syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGUSR1,
		syscall.SIGUSR2, syscall.SIGPIPE, syscall.SIGALRM:
		return true
	}
	return false
}

// namespaceInitIgnoring reports whether pid is PID 1 of a PID namespace
// below ours that neither catches nor ignores sig.
func namespaceInitIgnoring(pid int, sig syscall.Signal) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	var nsInit bool
	var caught, ignored uint64
	for line := range strings.Lines(string(b)) {
		key, val, _ := strings.Cut(strings.TrimSpace(line), ":")
		val = strings.TrimSpace(val)
		switch key {
		case "NSpid":
			f := strings.Fields(val)
			nsInit = len(f) > 1 && f[len(f)-1] == "1"
		case "SigCgt":
			fmt.Sscanf(val, "%x", &caught)
		case "SigIgn":
			fmt.Sscanf(val, "%x", &ignored)
		}
	}
	bit := uint64(1) << (uint(sig) - 1)
	return nsInit && (caught|ignored)&bit == 0
}
