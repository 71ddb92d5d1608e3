package sandbox

import (
	"errors"
	"fmt"
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

// tcpRights are blocked entirely by --network off.
const tcpRights = landlock.AccessNetSet(ll.AccessNetBindTCP | ll.AccessNetConnectTCP)

// deviceFiles stay writable in every mode: shells and tools write to them
// as a matter of course.
var deviceFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// deviceDirs are device trees that behave like the temporary directory.
var deviceDirs = []string{"/dev/pts", "/dev/shm"}

// spawner is an OS thread restricted by Landlock that starts processes.
type spawner struct {
	cont      *containment // nil: Landlock only
	reqs      chan spawnRequest
	done      chan struct{}
	closeOnce sync.Once
}

// spawnRequest is a command to start, or a function to run, on the
// confining thread.
type spawnRequest struct {
	cmd   *exec.Cmd
	fn    func() error
	reply chan error
}

// newSpawner creates the Landlock ruleset (filesystem writes limited to
// roots when fs is set, TCP blocked when net is set) and a thread that
// enforces it on itself and then starts the processes it is given.
//
// With cont, the thread first sets up containment (contain.go) for
// stateDir, and commands start in PID namespaces when the probe succeeds.
func newSpawner(fs bool, roots []string, net bool, cont *containment, stateDir string) (*spawner, error) {
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
	fd, flags, err := cfg.BestEffort().NewRulesetFD(rules...)
	if err != nil {
		return nil, fmt.Errorf("creating the Landlock ruleset: %w", err)
	}
	if fd < 0 {
		return nil, errors.New("landlock: nothing to enforce on this kernel")
	}
	s := &spawner{reqs: make(chan spawnRequest), done: make(chan struct{})}
	ready := make(chan error, 1)
	go s.run(fd, flags, ready, cont, stateDir)
	if err := <-ready; err != nil {
		return nil, err
	}
	if cont != nil {
		cont.probe(s)
		s.cont = cont
	}
	return s, nil
}

// run is the confining thread. It never unlocks the OS thread: once
// restricted, the thread must not run any other goroutine, and when run
// returns the Go runtime ends the thread.
func (s *spawner) run(fd int, flags uint32, ready chan<- error, cont *containment, stateDir string) {
	runtime.LockOSThread()
	if cont != nil {
		cont.setUpThread(stateDir) // before Landlock, which forbids mounts
	}
	err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
	if err == nil {
		err = ll.LandlockRestrictSelf(fd, flags)
	}
	unix.Close(fd)
	if err != nil {
		ready <- fmt.Errorf("enforcing the Landlock ruleset: %w", err)
		return
	}
	ready <- nil
	for {
		select {
		case r := <-s.reqs:
			if r.fn != nil {
				r.reply <- r.fn()
			} else {
				r.reply <- r.cmd.Start()
			}
		case <-s.done:
			return
		}
	}
}

func (s *spawner) start(cmd *exec.Cmd) error {
	if s.cont != nil {
		s.cont.wrap(cmd)
	}
	return s.do(spawnRequest{cmd: cmd})
}

func (s *spawner) do(r spawnRequest) error {
	reply := make(chan error, 1)
	r.reply = reply
	select {
	case s.reqs <- r:
	case <-s.done:
		return errors.New("sandbox: closed")
	}
	return <-reply
}

func (s *spawner) close() { s.closeOnce.Do(func() { close(s.done) }) }
