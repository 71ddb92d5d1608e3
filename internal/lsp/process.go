package lsp

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tiny-agent/tiny-go/internal/procs"
	"github.com/tiny-agent/tiny-go/internal/sandbox"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// spawner starts server processes the way commands start: in the
// sandbox (its namespaces, when the kernel allows them, end the whole
// server with tiny-go), in a session and process group of their own, with
// a Pdeathsig and the run's process marker, so that nothing survives
// tiny-go, not even a SIGKILL of it.
type spawner struct {
	workDir string
	env     []string
	sandbox *sandbox.Sandbox
	procs   *procs.Tracker
}

// process is one started server.
type process struct {
	cmd    *exec.Cmd
	pgid   int
	stdin  *os.File
	stdout *os.File
	procs  *procs.Tracker
	done   chan struct{}
	err    error
	once   sync.Once
}

func (sp spawner) spawn(s Server, root string) (*process, error) {
	path, err := exec.LookPath(s.Command[0])
	if err != nil {
		return nil, fmt.Errorf("%s is not on PATH", s.Command[0])
	}
	logFile, err := sp.openLog(s.Name)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child has its own copy
	fmt.Fprintf(logFile, "--- %s tiny-go starts %s in %s\n", time.Now().UTC().Format(time.RFC3339), strings.Join(s.Command, " "), root)
	cmd := exec.Command(path, s.Command[1:]...)
	cmd.Args[0] = s.Command[0]
	cmd.Dir = root
	cmd.Env = append(append(sp.environ(), s.Env...), sp.procs.NewMarker())
	cmd.Stderr = logFile
	stdin, stdout, err := sp.sandbox.StartServer(cmd)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", s.Command[0], err)
	}
	p := &process{cmd: cmd, pgid: cmd.Process.Pid, stdin: stdin, stdout: stdout, procs: sp.procs, done: make(chan struct{})}
	sp.procs.Started(p.pgid, "language server "+s.Name+": "+strings.Join(s.Command, " "))
	go p.reap()
	return p, nil
}

func (sp spawner) environ() []string {
	if sp.env != nil {
		return append([]string(nil), sp.env...)
	}
	return os.Environ()
}

// openLog opens .tiny-agent/lsp/<name>.log for appending: what a server
// writes to stderr, for the user who wonders why it said nothing.
func (sp spawner) openLog(name string) (*os.File, error) {
	dir, err := store.StateDir(sp.workDir, "lsp", true)
	if err != nil {
		return nil, fmt.Errorf("opening the language server log: %w", err)
	}
	return os.OpenFile(filepath.Join(dir, safeName(name)+".log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == 0 || r == '\\' {
			return '_'
		}
		return r
	}, s)
}

func (p *process) reap() {
	err := p.cmd.Wait()
	p.err = err
	p.procs.Ended(p.pgid)
	close(p.done)
}

func (p *process) pipe() pipe {
	return pipe{Reader: p.stdout, WriteCloser: p.stdin, closeRead: p.stdout.Close}
}

func (p *process) exitError() error {
	select {
	case <-p.done:
		if p.err == nil {
			return errors.New("it ended")
		}
		return p.err
	default:
		return errors.New("it closed its output")
	}
}

// kill ends the server's whole process group (a sandboxed server is PID
// 1 of its namespace: the kernel then ends everything it started).
func (p *process) kill() {
	p.once.Do(func() {
		_ = sandbox.SignalGroup(p.pgid, syscall.SIGKILL)
		select {
		case <-p.done:
		case <-time.After(2 * time.Second):
		}
		p.stdin.Close()
	})
}
