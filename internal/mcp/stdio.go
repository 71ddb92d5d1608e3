package mcp

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tiny-agent/tiny-go/internal/procs"
	"github.com/tiny-agent/tiny-go/internal/sandbox"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// The minimal environment of a stdio server (mcp.md), besides passEnv.
var baseEnv = []string{"PATH", "HOME", "LANG", "TMPDIR"}

// How long stop waits for a server to exit after its stdin closed, and
// again after SIGTERM, before SIGKILL.
const stopGrace = 500 * time.Millisecond

// stdioProcess is the running program of a stdio server: the leader of its
// own process group (and session), with its stderr appended to a log.
type stdioProcess struct {
	alias  string
	cmd    *exec.Cmd
	pgid   int
	stdin  *os.File // our ends of its pipes
	stdout *os.File
	log    string // the log path, relative to the working directory when inside it
	procs  *procs.Tracker

	done     chan struct{} // closed once the exit is collected
	mu       sync.Mutex
	stopping bool   // stop signalled it: the exit is not the server's own
	exit     string // "exit status 3", "killed by signal 9"

	stopOnce sync.Once
}

// startStdio starts s's program in the working directory with the minimal
// environment, its stderr appended to .tiny-agent/mcp/<alias>.log and a
// process record that lets a later run kill it if tiny-go is killed.
func startStdio(s Server, opts Options) (*stdioProcess, error) {
	workDir := opts.WorkDir
	if workDir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		workDir = wd
	}
	lookup := opts.LookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	env, err := serverEnv(s, lookup, opts.Secrets)
	if err != nil {
		return nil, err
	}
	path, err := lookPath(s.Command, env)
	if err != nil {
		return nil, err
	}
	dir, err := store.StateDir(workDir, "mcp", true)
	if err != nil {
		return nil, err
	}
	logName := logFileName(s.Alias)
	logFile, err := openNoFollow(filepath.Join(dir, logName), os.O_WRONLY|os.O_CREATE|os.O_APPEND)
	if err != nil {
		return nil, fmt.Errorf("opening its log: %w", err)
	}
	defer logFile.Close() // the child has its own copy
	fmt.Fprintf(logFile, "--- %s tiny-go starts %s\n", time.Now().UTC().Format(time.RFC3339), s.Target())

	cmd := exec.Command(path, s.Args...)
	cmd.Args[0] = s.Command
	cmd.Dir = workDir
	cmd.Env = env
	// Its own session and group, dying with tiny-go (StartServer); the
	// run's process record (procs) lets the next start end what the
	// leader started. The sandbox confines it like bash (mcp.md). Our own
	// pipes: the SDK reads the end of the stream, not "file already
	// closed".
	cmd.Stderr = logFile
	stdin, stdout, err := opts.Sandbox.StartServer(cmd)
	if err != nil {
		return nil, describeStartError(err)
	}
	p := &stdioProcess{
		alias:  s.Alias,
		cmd:    cmd,
		pgid:   cmd.Process.Pid,
		stdin:  stdin,
		stdout: stdout,
		log:    displayPath(workDir, filepath.Join(dir, logName)),
		procs:  opts.Procs,
		done:   make(chan struct{}),
	}
	opts.Procs.Started(p.pgid, "MCP "+s.Alias+": "+s.Target())
	go p.reap()
	return p, nil
}

// serverEnv is the minimal environment: PATH, HOME, LANG, TMPDIR, the
// passEnv variables that are set and the literal "env" ones. A variable holding a secret tiny-go
// knows (the model's API key, a token) is refused, not silently dropped.
func serverEnv(s Server, lookup func(string) (string, bool), secrets []string) ([]string, error) {
	var env []string
	for _, name := range append(append([]string(nil), baseEnv...), s.PassEnv...) {
		v, ok := lookup(name)
		if !ok {
			continue
		}
		for _, secret := range secrets {
			if secret != "" && strings.Contains(v, secret) {
				return nil, fmt.Errorf("%s holds the model's API key or another secret; it is never passed to an MCP server", name)
			}
		}
		env = append(env, name+"="+v)
	}
	for _, name := range sortedKeys(s.Env) {
		v := s.Env[name]
		for _, secret := range secrets {
			if secret != "" && strings.Contains(v, secret) {
				return nil, fmt.Errorf(`"env" %s holds the model's API key or another secret; it is never passed to an MCP server`, name)
			}
		}
		env = append(env, name+"="+v)
	}
	return env, nil
}

// lookPath finds command on the PATH the server gets.
func lookPath(command string, env []string) (string, error) {
	if filepath.IsAbs(command) {
		return command, nil
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // a relative PATH entry would depend on the directory
		}
		candidate := filepath.Join(dir, command)
		if fi, err := os.Stat(candidate); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return candidate, nil
		}
	}
	return "", errors.New("not found on PATH")
}

func describeStartError(err error) error {
	var pathErr *os.PathError
	if errors.As(err, &pathErr) {
		switch {
		case errors.Is(pathErr.Err, os.ErrNotExist):
			return errors.New("no such file")
		case errors.Is(pathErr.Err, os.ErrPermission):
			return errors.New("permission denied")
		}
		return pathErr.Err
	}
	return err
}

var safeLogName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]*$`) })

// logFileName is <alias>.log, or an encoded alias when it could name
// another path.
func logFileName(alias string) string {
	if safeLogName().MatchString(alias) {
		return alias + ".log"
	}
	return "alias-" + base64.RawURLEncoding.EncodeToString([]byte(alias)) + ".log"
}

// displayPath is path relative to workDir when inside it.
func displayPath(workDir, path string) string {
	if rel, err := filepath.Rel(workDir, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

// reap collects the exit and closes done.
func (p *stdioProcess) reap() {
	err := p.cmd.Wait()
	text := "exit status 0"
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			text = "killed by signal " + fmt.Sprint(int(ws.Signal()))
		} else {
			text = fmt.Sprintf("exit status %d", ee.ExitCode())
		}
	} else if err != nil {
		text = err.Error()
	}
	p.mu.Lock()
	p.exit = text
	p.mu.Unlock()
	close(p.done)
}

// exited reports whether the process has exited; nil has not.
func (p *stdioProcess) exited() bool {
	if p == nil {
		return false
	}
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// waitExit waits up to d for the exit to be collected.
func (p *stdioProcess) waitExit(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
	}
}

func (p *stdioProcess) exitText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exit
}

// seeLog points at the server's stderr log; "" for nil.
func (p *stdioProcess) seeLog() string {
	if p == nil {
		return ""
	}
	return "; its stderr is in " + p.log
}

// endText says how the server ended mid-session.
func (p *stdioProcess) endText() string {
	p.mu.Lock()
	stopping, exit := p.stopping, p.exit
	p.mu.Unlock()
	if exit != "" && !stopping {
		return "the server exited (" + exit + ")" + p.seeLog()
	}
	return "the server stopped speaking MCP, so tiny-go ended it" + p.seeLog()
}

// gone is the error of a call to a server that is no longer there.
func (p *stdioProcess) gone() error {
	return errors.New("the server is gone: " + strings.TrimPrefix(p.endText(), "the server "))
}

// stop ends the process group: the server had its stdin closed already
// (or is stuck), so it gets a moment, then SIGTERM, then SIGKILL. Whatever
// is left of the group (its children) is killed even when the leader
// exited on its own. Safe to call more than once.
func (p *stdioProcess) stop() {
	p.stopOnce.Do(func() {
		p.stdin.Close()
		if !p.exited() {
			p.waitExit(stopGrace)
		}
		if !p.exited() {
			p.mu.Lock()
			p.stopping = true
			p.mu.Unlock()
			// A sandboxed server is PID 1 of its namespace, which the
			// kernel shields from signals it does not handle.
			sandbox.SignalGroup(p.pgid, syscall.SIGTERM)
			p.waitExit(stopGrace)
		}
		if !p.exited() {
			syscall.Kill(-p.pgid, syscall.SIGKILL)
			p.waitExit(stopGrace)
		}
		// Children that outlived the leader stay in its group.
		syscall.Kill(-p.pgid, syscall.SIGKILL)
		p.stdout.Close()
		p.procs.Ended(p.pgid)
	})
}
