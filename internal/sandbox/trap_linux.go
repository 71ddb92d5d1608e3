package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/fdpass"
	"github.com/tiny-agent/tiny-go/internal/sandbox/nsinit"
)

// TrapRefusal says why StartTrapped cannot start commands here (no
// namespaces: the init installs the journal's filter); nil when it can.
func (s *Sandbox) TrapRefusal() error { return s.OverlayRefusal() }

// StartTrapped is Start with a second seccomp filter, filter (the kernel's
// struct sock_filter array: journal.Filter), installed by the namespace
// init after the sandbox's own, with a listener it hands back here
// (nsinit.JournalForm): the listener is returned, close-on-exec, and the
// command never holds it. The command is PID 1 of its namespaces, so once
// Wait returns every process the filter traps has ended. When the init
// fails before handing it over, the command is waited for and the error
// says so (its standard error has the init's line).
func (s *Sandbox) StartTrapped(cmd *exec.Cmd, filter []byte) (*os.File, error) {
	if err := s.TrapRefusal(); err != nil {
		return nil, err
	}
	if len(filter) == 0 || len(filter)%8 != 0 {
		return nil, errors.New("sandbox: StartTrapped needs a seccomp program")
	}
	prog, err := sealedMemfd("tiny-go-journal", filter)
	if err != nil {
		return nil, fmt.Errorf("sandbox: the journal's filter: %w", err)
	}
	defer prog.Close()
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: socket pair for the journal: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(pair[0]), "journal-socket"), os.NewFile(uintptr(pair[1]), "journal-socket")
	defer ours.Close()
	c := s.spawner.cont
	start := func() error {
		if err := c.wrapInit(cmd, c.ruleset, nsinit.JournalForm); err != nil {
			return err
		}
		// At <fd>+2 and <fd>+3, after the ruleset and the sandbox's filter.
		cmd.ExtraFiles = append(cmd.ExtraFiles, prog, theirs)
		if len(filter) >= 4096 {
			cmd.Path = "/proc/self/exe" // the static init reads at most 4095 bytes
		}
		return s.spawner.launcher.do(spawnRequest{cmd: cmd})
	}
	if s.net != nil {
		err = s.net.start(cmd, start)
	} else {
		err = start()
	}
	theirs.Close()
	if err != nil {
		return nil, err
	}
	l, err := fdpass.Receive(ours, "seccomp-listener")
	if err != nil {
		_ = cmd.Wait()
		return nil, fmt.Errorf("sandbox: the namespace init handed over no seccomp listener (%v): see the command's standard error", err)
	}
	return l, nil
}

// sealedMemfd is b in a sealed memfd, close-on-exec, never executable
// (vm.memfd_noexec=2 refuses a memfd without MFD_NOEXEC_SEAL).
func sealedMemfd(name string, b []byte) (*os.File, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING|unix.MFD_NOEXEC_SEAL)
	if err == unix.EINVAL { // before 6.3
		fd, err = unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	}
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_SEAL|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// JournalExclude are the folders a journal of a command must never
// touch (journal.Options.Exclude): the state folder (workDir's
// .tiny-agent), the state key's folder, and the paths Policy.Hidden names
// now (call it per command, as they are hidden per command).
func (s *Sandbox) JournalExclude(workDir string) []string {
	return append([]string{filepath.Join(workDir, ".tiny-agent")}, s.excludedNow()...)
}

// excludedNow are the state folder, the key's folder and what
// Policy.Hidden names now.
func (s *Sandbox) excludedNow() []string {
	if s == nil || s.spawner == nil || s.spawner.cont == nil {
		return nil
	}
	c := s.spawner.cont
	var out []string
	for _, p := range []string{c.stateDir, c.keyDir} {
		if p != "" {
			out = append(out, p)
		}
	}
	if c.hidden != nil {
		for _, p := range c.hidden() {
			// As the init, which covers only what exists: a name made
			// by the command there is its own, and journaled.
			if _, err := os.Stat(p); p != "" && err == nil {
				out = append(out, p)
			}
		}
	}
	return out
}

// MayWrite says whether a command may write the file at abs, as far as
// the sandbox decides (journal.Options.Writable): under a writable root,
// with the links of its existing part resolved as Landlock resolves them,
// and neither in the state folder nor hidden. The file's permissions are
// the kernel's to check.
func (s *Sandbox) MayWrite(abs string) bool {
	if s == nil || s.mode == Off || s.spawner == nil || s.CheckWrite(abs, abs) != nil {
		return false
	}
	real := resolveExisting(abs)
	for _, p := range s.excludedNow() {
		if underAny(abs, []string{p}) || underAny(real, []string{resolveExisting(p)}) {
			return false
		}
	}
	return true
}
