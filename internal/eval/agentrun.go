// Running tiny-go on a task: its command line and environment, the process
// and what its eval log says; then the task's test.

package eval

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/sandbox"
)

// agentRun is how the agent process ended.
type agentRun struct {
	exit     int
	timedOut bool
	sent     int     // HTTP requests, from the eval log
	cost     float64 // US dollars the replies reported
	diverged string  // the replay's first difference
	stderr   string  // the end of its stderr
}

// why is the agent's last stderr line, for a reason.
func (a agentRun) why() string {
	if l := lastLine(a.stderr); l != "" {
		return ": " + l
	}
	return ""
}

// Replay never contacts an endpoint; these stand in for credentials so
// that tiny-go starts, and keep real keys out of the process.
const replayKey = "eval-replay-no-key"

func (cfg *Config) runAgent(ctx context.Context, t Task, in taskInput, rec *Recording, root, repo string) (agentRun, error) {
	run := agentRun{exit: -1}
	args := cfg.agentArgs(in, rec, repo)
	logPath := filepath.Join(root, "eval.log")
	env := cfg.agentEnv(t, rec, root, logPath)

	stdout, err := os.Create(filepath.Join(root, "agent.jsonl"))
	if err != nil {
		return run, err
	}
	defer stdout.Close()
	stderrFile, err := os.Create(filepath.Join(root, "agent.log"))
	if err != nil {
		return run, err
	}
	defer stderrFile.Close()
	var stderr bytes.Buffer
	actx, cancel := context.WithTimeout(ctx, cfg.AgentTimeout)
	defer cancel()
	cmd := exec.CommandContext(actx, cfg.Command[0], args...)
	cmd.Dir = repo
	cmd.Env = env
	cmd.Stdin = nil
	cmd.Stdout = stdout
	cmd.Stderr = io.MultiWriter(stderrFile, &limitedTail{buf: &stderr})
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Out of time: SIGTERM lets tiny-go abort durably (the session then
	// says what was cut short); the group is killed if it does not end.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = abortGrace
	err = cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	run.stderr = stderr.String()
	run.timedOut = errors.Is(actx.Err(), context.DeadlineExceeded)
	var ee *exec.ExitError
	switch {
	case err == nil:
		run.exit = 0
	case errors.As(err, &ee):
		run.exit = ee.ExitCode() // -1 when killed by a signal
	default:
		return run, fmt.Errorf("start tiny-go: %w", err)
	}
	if err := run.readLog(logPath); err != nil {
		return run, err
	}
	return run, nil
}

// agentArgs is tiny-go's command line for the task.
func (cfg *Config) agentArgs(in taskInput, rec *Recording, repo string) []string {
	args := append([]string{}, cfg.Command[1:]...)
	// The suite measures the core loop; its recordings were made with the
	// built-in tools only, so the todo list and subagents stay off, and so
	// do language servers (TINY_LSP=off below): what they append to a
	// result depends on timing, and a replay must see what was recorded.
	args = append(args, "--json", "--cwd", repo, "--agent-tools=false")
	model := cfg.Model
	if model == "" && rec != nil {
		model = rec.model()
	}
	if model != "" && !hasFlag(in.args, "--model") {
		args = append(args, "--model", model)
	}
	args = append(args, in.args...)
	return append(args, "--", in.prompt)
}

// agentEnv is tiny-go's environment for the task: recording or replaying
// it, and in a replay stand-in credentials and the recorded endpoint.
func (cfg *Config) agentEnv(t Task, rec *Recording, root, logPath string) []string {
	env := append(append([]string{}, cfg.Env...), cfg.stableEnv()...)
	env = append(env, EnvRoot+"="+root, EnvLog+"="+logPath, EnvRecord+"=", EnvReplay+"=", "TINY_LSP=off")
	switch {
	case cfg.Record != "":
		env = append(env, EnvRecord+"="+filepath.Join(root, "exchange.jsonl"))
	case rec != nil:
		env = append(env, EnvReplay+"="+filepath.Join(cfg.Replay, t.Name+".json"),
			"OPENROUTER_API_KEY="+replayKey, "TINY_API_KEY="+replayKey, "ANTHROPIC_API_KEY="+replayKey, "OPENAI_API_KEY="+replayKey,
			"TINY_ENDPOINT="+replayEndpoint(rec), "TINY_PROVIDER="+rec.Provider)
	}
	return env
}

// readLog counts from the eval log what the agent sent, what it cost and
// where a replay diverged.
func (run *agentRun) readLog(logPath string) error {
	log, err := os.ReadFile(logPath)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for _, line := range strings.Split(string(log), "\n") {
		if line == "sent" {
			run.sent++
		} else if c, ok := strings.CutPrefix(line, "cost "); ok {
			if v, err := strconv.ParseFloat(c, 64); err == nil {
				run.cost += v
			}
		} else if d, ok := strings.CutPrefix(line, "diverged: "); ok && run.diverged == "" {
			run.diverged = d
		}
	}
	// A divergence was the last request that counted as sent.
	if run.diverged != "" {
		run.sent++
	}
	return nil
}

// sandboxWarned: the sandbox's warning for test.sh is said once.
var sandboxWarned sync.Once

// runTest runs test.sh in the repository with its own time limit,
// contained as the agent's commands are (--sandbox workspace over the
// repository, the run's root writable too): test.sh runs what the model
// left in the repository (its tests, its Makefile), which must not get
// out through the grading.
func (cfg *Config) runTest(ctx context.Context, script, root, repo string) (exit int, out string, timedOut bool, err error) {
	tctx, cancel := context.WithTimeout(ctx, cfg.TestTimeout)
	defer cancel()
	sb, warning, err := sandbox.New(sandbox.Policy{Mode: sandbox.Workspace, WorkDir: repo, Writable: []string{root}})
	if err != nil {
		return -1, "", false, err
	}
	defer sb.Close()
	if warning != "" {
		// Once a run: every test.sh of this machine is as weak.
		sandboxWarned.Do(func() { fmt.Fprintf(cfg.Progress, "eval: test.sh: %s\n", strings.TrimPrefix(warning, "tiny-go: ")) })
	}
	var buf bytes.Buffer
	cmd := exec.CommandContext(tctx, "bash", script)
	cmd.Dir = repo
	cmd.Env = append(append([]string{}, cfg.Env...), cfg.stableEnv()...)
	cmd.Env = append(cmd.Env, "EVAL_ROOT="+root, "EVAL_REPO="+repo)
	tail := &limitedTail{buf: &buf}
	cmd.Stdout, cmd.Stderr = tail, tail
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	if err = sb.Start(cmd); err == nil {
		err = cmd.Wait()
	}
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	timedOut = errors.Is(tctx.Err(), context.DeadlineExceeded)
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, buf.String(), timedOut, nil
	case errors.As(err, &ee):
		return ee.ExitCode(), buf.String(), timedOut, nil
	case timedOut:
		return -1, buf.String(), true, nil
	}
	return -1, buf.String(), false, err
}

// limitedTail keeps the last n bytes written (tailBytes when n is 0).
type limitedTail struct {
	mu  sync.Mutex
	buf *bytes.Buffer
	n   int
}

func (l *limitedTail) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	n := l.n
	if n == 0 {
		n = tailBytes
	}
	if l.buf.Len() > 2*n {
		keep := append([]byte(nil), l.buf.Bytes()[l.buf.Len()-n:]...)
		l.buf.Reset()
		l.buf.Write(keep)
	}
	return len(p), nil
}

// endpointOf is TINY_ENDPOINT of env without credentials or query, for
// a recording; a replay points tiny-go at it (it is never contacted) so
// that it picks the same kind of provider.
func endpointOf(env []string) string {
	ep := envValue(env, "TINY_ENDPOINT")
	if ep == "" {
		ep = provider.DefaultEndpoint
	}
	u, err := url.Parse(ep)
	if err != nil {
		return ""
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	// A loopback server's port changes from run to run; a replay never
	// contacts it, so the recording keeps only the host.
	if h := u.Hostname(); h == "127.0.0.1" || h == "localhost" || h == "::1" {
		u.Host = h
		if strings.Contains(h, ":") {
			u.Host = "[" + h + "]"
		}
	}
	return u.String()
}

// envValue is the last value of name in env.
func envValue(env []string, name string) string {
	var v string
	for _, kv := range env {
		if val, ok := strings.CutPrefix(kv, name+"="); ok {
			v = val
		}
	}
	return v
}

func replayEndpoint(rec *Recording) string {
	if rec.Endpoint != "" {
		return rec.Endpoint
	}
	return "http://127.0.0.1:9/v1"
}

func hasFlag(args []string, name string) bool {
	for _, a := range args {
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}
