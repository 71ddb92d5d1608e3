package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/store"
)

// Containment is what the confining thread adds to Landlock when the
// kernel allows it (root; see docs/containment.md):
//
//   - every command is the child of a small init (/bin/sh) that is PID 1
//     of a new PID namespace: when the command ends, is stopped, or tiny-go
//     is SIGKILLed (the init carries the caller's Pdeathsig), the init
//     exits and the kernel kills every process in the namespace, however
//     it detached itself (setsid, nohup, double fork, env -i);
//   - the thread has a mount namespace of its own in which .tiny-agent
//     (sessions, sidecars, checkpoints, approvals) is mounted read-only, so
//     no command, nor write or edit, can rewrite tiny-go's history;
//   - CAP_SYS_PTRACE is dropped from the bounding set (and ambient
//     capabilities cleared), so a command run as root cannot read the
//     memory of tiny-go (made non-dumpable) through /proc/<pid>/mem.
type containment struct {
	pidNS      bool   // commands run in their own PID namespace
	readOnly   string // the .tiny-agent directory mounted read-only, or ""
	noPtrace   bool   // CAP_SYS_PTRACE is out of the bounding set
	shell      string // the init, /bin/sh
	lostReason string // why something was refused, for the warning
	noPIDNS    bool   // Policy.NoNamespaces
}

// initScript is the PID 1 of a command's namespace: it runs the command
// with the original standard input (an asynchronous list would get
// /dev/null), passes SIGTERM and SIGINT on to every process of the
// namespace (a PID 1 without a handler would ignore them), and exits with
// the command's status, which ends the namespace.
const initScript = `exec 3<&0; trap 'kill -TERM -1 2>/dev/null; exit 143' TERM; trap 'kill -INT -1 2>/dev/null; exit 130' INT; "$@" <&3 3<&- & wait $!`

// setUpThread runs on the confining thread before Landlock (which forbids
// mount changes): a private mount namespace with stateDir read-only, and
// the capability drop. Errors are not fatal: what could not be done is
// named in the warning.
func (c *containment) setUpThread(stateDir string) {
	if os.Geteuid() != 0 {
		c.lostReason = "not running as root (user namespaces cannot be created from a multithreaded program under Landlock)"
		return
	}
	// The bounding set and ambient capabilities are per thread and
	// inherited by everything this thread starts.
	if err := unix.Prctl(unix.PR_CAPBSET_DROP, unix.CAP_SYS_PTRACE, 0, 0, 0); err == nil {
		c.noPtrace = true
	}
	_ = unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
	if err := c.readOnlyState(stateDir); err != nil {
		c.lostReason = err.Error()
	}
}

func (c *containment) readOnlyState(dir string) error {
	if dir == "" {
		return nil
	}
	if err := unix.Unshare(unix.CLONE_FS | unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("no mount namespace (%v)", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("no private mounts (%v)", err)
	}
	if err := unix.Mount(dir, dir, "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("cannot bind %s (%v)", dir, err)
	}
	if err := unix.Mount("", dir, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
		return fmt.Errorf("cannot make %s read-only (%v)", dir, err)
	}
	c.readOnly = dir
	return nil
}

// probe checks, once, that a PID namespace can be made: by starting
// `true` under the init, from the confining thread.
func (c *containment) probe(s *spawner) {
	if c.noPIDNS && c.lostReason == "" {
		c.lostReason = "PID namespaces disabled"
	}
	if c.lostReason != "" {
		return
	}
	sh, err := exec.LookPath("/bin/sh")
	if err != nil {
		c.lostReason = "no /bin/sh for the namespace's init"
		return
	}
	c.shell = sh
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	c.pidNS = true
	c.wrap(cmd)
	if err := s.start(cmd); err != nil {
		c.pidNS = false
		c.lostReason = fmt.Sprintf("PID namespaces refused (%v)", unwrapErrno(err))
		return
	}
	if err := cmd.Wait(); err != nil {
		c.pidNS = false
		c.lostReason = fmt.Sprintf("the namespace's init failed (%v)", err)
	}
}

func unwrapErrno(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return err
}

// wrap makes cmd start as the child of the init of a new PID namespace.
// The caller's SysProcAttr (process group or session, Pdeathsig) applies
// to the init, which is what the caller signals and waits for.
func (c *containment) wrap(cmd *exec.Cmd) {
	if c == nil || !c.pidNS || cmd.Err != nil {
		return
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Cloneflags |= unix.CLONE_NEWPID
	if cmd.SysProcAttr.Pdeathsig == 0 {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	args := append([]string{c.shell, "-c", initScript, "tiny-go-init", cmd.Path}, cmd.Args[1:]...)
	cmd.Path, cmd.Args = c.shell, args
}

// warning names what is lost when containment is partial; "" when none.
func (c *containment) warning() string {
	if c == nil {
		return ""
	}
	var lost []string
	if !c.pidNS {
		lost = append(lost, "commands may outlive tiny-go when it is killed (until the next start reaps them)")
	}
	if c.readOnly == "" {
		lost = append(lost, "commands can write .tiny-agent")
	}
	if !c.noPtrace && os.Geteuid() == 0 {
		lost = append(lost, "root commands can read tiny-go's memory")
	}
	if len(lost) == 0 {
		return ""
	}
	return fmt.Sprintf("no namespaces for commands (%s): %s", c.lostReason, joinLost(lost))
}

func joinLost(l []string) string {
	s := l[0]
	for _, x := range l[1:] {
		s += "; " + x
	}
	return s
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
