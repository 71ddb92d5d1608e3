//go:build linux && (amd64 || arm64)

package journal

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/fdpass"
	"golang.org/x/sys/unix"
)

// The re-executed binary finds its work in these variables: the fd of the
// socket to hand the listener back on, and the program to become.
const (
	envSock = "TINY_JOURNAL_SOCK"
	envPath = "TINY_JOURNAL_PATH"
)

// Session is a command running under the journal.
type Session struct {
	cmd *exec.Cmd
	*Supervision
}

// ChildMain must run first in main (and in TestMain) of a binary that calls
// Start: in the re-executed child it installs the filter on this thread,
// hands the listener to the parent and becomes the command; it never
// returns there. Elsewhere it returns at once.
func ChildMain() {
	sock := os.Getenv(envSock)
	if sock == "" {
		return
	}
	runtime.LockOSThread() // the filter is on this thread, and exec keeps it
	err := becomeCommand(sock)
	fmt.Fprintf(os.Stderr, "tiny-go journal: %v\n", err)
	os.Exit(126)
}

func becomeCommand(sock string) error {
	fd, err := strconv.Atoi(sock)
	if err != nil {
		return fmt.Errorf("bad %s: %w", envSock, err)
	}
	path := os.Getenv(envPath)
	env := withoutVars(os.Environ())
	listener, err := installFilter()
	if err != nil {
		return err
	}
	if err := unix.Sendmsg(fd, []byte{0}, unix.UnixRights(listener), nil, 0); err != nil {
		return fmt.Errorf("hand the seccomp listener over: %w", err)
	}
	unix.Close(listener)
	unix.Close(fd)
	return unix.Exec(path, os.Args[1:], env)
}

func withoutVars(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, envSock+"=") && !strings.HasPrefix(kv, envPath+"=") {
			out = append(out, kv)
		}
	}
	return out
}

// Start runs cmd (not started, with a resolved Path) on the real tree,
// journaling into dir (made if need be; on the tree's file system, so
// a removed file is kept by a hard link) what it changes under tree.
// The binary must call ChildMain first in main.
func Start(cmd *exec.Cmd, tree, dir string) (*Session, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("journal: find this binary: %w", err)
	}
	// Unconfined: the command may write whatever its uid may.
	sup, err := prepare(tree, dir, Options{Writable: func(string) bool { return true }})
	if err != nil {
		return nil, err
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		sup.j.close()
		return nil, fmt.Errorf("journal: socketpair: %w", err)
	}
	parent, child := os.NewFile(uintptr(pair[0]), "journal"), os.NewFile(uintptr(pair[1]), "journal-child")
	defer parent.Close()
	cmd.Env = append(cmdEnv(cmd), envSock+"="+strconv.Itoa(3+len(cmd.ExtraFiles)), envPath+"="+cmd.Path)
	cmd.ExtraFiles = append(cmd.ExtraFiles, child)
	cmd.Args = append([]string{cmd.Args[0]}, cmd.Args...)
	cmd.Path = self
	err = cmd.Start()
	child.Close()
	if err != nil {
		sup.j.close()
		return nil, fmt.Errorf("journal: start %s: %w", cmd.Args[1], err)
	}
	listener, err := ReceiveListener(parent)
	if err != nil {
		_ = cmd.Wait()
		sup.j.close()
		return nil, err
	}
	return &Session{cmd: cmd, Supervision: attach(listener, sup)}, nil
}

func cmdEnv(cmd *exec.Cmd) []string {
	if cmd.Env != nil {
		return cmd.Env
	}
	return os.Environ()
}

// ReceiveListener receives the seccomp listener a process sends over
// sock (SCM_RIGHTS, one byte of data), close-on-exec.
func ReceiveListener(sock *os.File) (*os.File, error) {
	l, err := fdpass.Receive(sock, "seccomp-listener")
	if errors.Is(err, fdpass.ErrNothing) {
		return nil, errors.New("journal: the command did not hand over its seccomp listener (see its stderr)")
	}
	if err != nil {
		return nil, fmt.Errorf("journal: receive the seccomp listener: %w", err)
	}
	return l, nil
}

// Wait waits for the command, then stops journaling: a process the
// command left behind gets ENOSYS from a call the journal would trap.
// It returns the command's error, or else the first failure to journal.
func (s *Session) Wait() error {
	err := s.cmd.Wait()
	if serr := s.Stop(); err == nil {
		err = serr
	}
	return err
}
