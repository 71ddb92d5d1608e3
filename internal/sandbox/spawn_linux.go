package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// ABI returns the kernel's Landlock ABI version, 0 when Landlock is
// missing or disabled.
func ABI() int {
	v, err := ll.LandlockGetABIVersion()
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// writeRights are the filesystem rights the sandbox restricts: every way
// to create, change, remove or move a file. Reading, executing and device
// ioctls stay unrestricted (tools.md: reads stay unrestricted).
const writeRights = landlock.AccessFSSet(ll.AccessFSWriteFile | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile |
	ll.AccessFSMakeChar | ll.AccessFSMakeDir | ll.AccessFSMakeReg | ll.AccessFSMakeSock |
	ll.AccessFSMakeFifo | ll.AccessFSMakeBlock | ll.AccessFSMakeSym | ll.AccessFSRefer | ll.AccessFSTruncate)

// fileWriteRights are what a device file needs: `> /dev/null` opens it for
// writing with O_TRUNC.
const fileWriteRights = landlock.AccessFSSet(ll.AccessFSWriteFile | ll.AccessFSTruncate)

// handledFS is what the best-effort ruleset of writeRights restricts on
// a kernel with Landlock ABI abi: nothing before ABI 2, which cannot grant
// Refer (go-landlock then enforces no file system rule at all), no
// Truncate before ABI 3.
func handledFS(abi int) uint64 {
	switch {
	case abi < 2:
		return 0
	case abi == 2:
		return uint64(writeRights) &^ ll.AccessFSTruncate
	}
	return uint64(writeRights)
}

// tcpRights are blocked entirely by --network off.
const tcpRights = landlock.AccessNetSet(ll.AccessNetBindTCP | ll.AccessNetConnectTCP)

// deviceFiles stay writable in every mode: shells and tools write to them
// as a matter of course.
var deviceFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// deviceDirs are device trees that behave like the temporary directory.
var deviceDirs = []string{"/dev/pts", "/dev/shm"}

// spawner starts the processes of a Sandbox from OS threads of their own:
// a process's Pdeathsig fires when the thread that started it ends, and
// these threads live as long as the Sandbox.
type spawner struct {
	confined  *thread      // restricted by Landlock: Do, and Start without namespaces
	launcher  *thread      // unrestricted: starts the namespace init, which restricts itself
	cont      *containment // nil: Landlock only
	ruleset   *os.File
	closeOnce sync.Once
}

// thread is a locked OS thread that runs requests.
type thread struct {
	reqs chan spawnRequest
	done chan struct{}
}

// spawnRequest is a command to start, or a function to run, on a thread.
type spawnRequest struct {
	cmd   *exec.Cmd
	fn    func() error
	reply chan error
}

// newSpawner creates the Landlock ruleset (filesystem writes limited to
// roots when fs is set, TCP blocked when net is set) and a thread that
// enforces it on itself and then starts the processes it is given.
//
// With cont, the thread first sets up containment (contain.go), and when
// the probe succeeds commands start from a second, unrestricted thread
// through the namespace init, which enforces the same ruleset.
func newSpawner(fs bool, roots []string, net bool, cont *containment) (*spawner, error) {
	cfg := landlock.Config{}
	var rules []landlock.Rule
	if fs {
		cfg.HandledAccessFS = writeRights
		rules = append(rules,
			landlock.PathAccess(writeRights, roots...),
			landlock.PathAccess(writeRights, deviceDirs...).IgnoreIfMissing(),
			landlock.PathAccess(fileWriteRights, deviceFiles...).IgnoreIfMissing())
	}
	if net {
		cfg.HandledAccessNet = tcpRights
	}
	newRuleset := func() (int, uint32, error) {
		fd, flags, err := cfg.BestEffort().NewRulesetFD(rules...)
		if err != nil {
			return -1, 0, fmt.Errorf("creating the Landlock ruleset: %w", err)
		}
		if fd < 0 {
			return -1, 0, errors.New("landlock: nothing to enforce on this kernel")
		}
		return fd, flags, nil
	}
	fd, flags, err := newRuleset()
	if err != nil {
		return nil, err
	}
	s := &spawner{ruleset: os.NewFile(uintptr(fd), "landlock-ruleset")}
	s.confined, err = startThread(func() error {
		if cont != nil {
			cont.setUpThread() // before Landlock, which forbids mounts
		}
		err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
		if err == nil {
			err = ll.LandlockRestrictSelf(fd, flags)
		}
		if err != nil {
			return fmt.Errorf("enforcing the Landlock ruleset: %w", err)
		}
		if cont != nil {
			// Commands started from here (no namespaces) inherit it.
			cont.noFilter = installSeccomp()
		}
		return nil
	})
	if err != nil {
		s.ruleset.Close()
		return nil, err
	}
	if cont == nil {
		return s, nil
	}
	s.launcher, _ = startThread(func() error { return nil })
	cont.ruleset = s.ruleset
	if cont.seccomp, err = seccompFile(cont.noFilter == nil); err != nil {
		s.close()
		return nil, err
	}
	cont.newRuleset = func() (*os.File, error) {
		fd, _, err := newRuleset()
		if err != nil {
			return nil, err
		}
		return os.NewFile(uintptr(fd), "landlock-ruleset"), nil
	}
	cont.probe(func(cmd *exec.Cmd) error { return s.launcher.do(spawnRequest{cmd: cmd}) })
	if !cont.ns {
		close(s.launcher.done) // commands start from the confined thread
		s.launcher = nil
	}
	s.cont = cont
	return s, nil
}

// startThread starts a thread that runs setup and then the requests it
// is given. It never unlocks the OS thread: once changed, the thread must
// not run any other goroutine, and when it ends the Go runtime ends the
// thread.
func startThread(setup func() error) (*thread, error) {
	t := &thread{reqs: make(chan spawnRequest), done: make(chan struct{})}
	ready := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := setup(); err != nil {
			ready <- err
			return
		}
		ready <- nil
		for {
			select {
			case r := <-t.reqs:
				if r.fn != nil {
					r.reply <- r.fn()
				} else {
					r.reply <- r.cmd.Start()
				}
			case <-t.done:
				return
			}
		}
	}()
	return t, <-ready
}

func (s *spawner) start(cmd *exec.Cmd) error {
	if s.cont != nil && s.cont.ns {
		if err := s.cont.wrap(cmd); err != nil {
			return err
		}
		return s.launcher.do(spawnRequest{cmd: cmd})
	}
	return s.confined.do(spawnRequest{cmd: cmd})
}

func (t *thread) do(r spawnRequest) error {
	reply := make(chan error, 1)
	r.reply = reply
	select {
	case t.reqs <- r:
	case <-t.done:
		return errors.New("sandbox: closed")
	}
	return <-reply
}

func (s *spawner) close() {
	s.closeOnce.Do(func() {
		close(s.confined.done)
		if s.launcher != nil {
			close(s.launcher.done)
		}
		s.ruleset.Close()
		if s.cont != nil && s.cont.program != nil {
			s.cont.program.Close()
		}
		if s.cont != nil && s.cont.seccomp != nil {
			s.cont.seccomp.Close()
		}
	})
}
