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

// Defaults of Config.
const (
	DefaultAgentTimeout = 10 * time.Minute
	DefaultTestTimeout  = 2 * time.Minute
	// abortGrace is how long a timed-out agent has to abort durably after
	// SIGTERM before its process group is killed.
	abortGrace = 10 * time.Second
	// tailBytes bounds the output kept for the report.
	tailBytes = 2000
)

// Modes of a Report.
const (
	ModeLive   = "live"
	ModeRecord = "record"
	ModeReplay = "replay"
)

// Statuses of a run.
const (
	StatusPass     = "pass"
	StatusFail     = "fail"     // test.sh failed
	StatusTimeout  = "timeout"  // the agent or test.sh ran out of time
	StatusDiverged = "diverged" // a replayed request differs from the recording
	StatusError    = "error"    // the task could not be run
)

// Config is one `tiny-go eval` invocation.
type Config struct {
	Tasks []Task
	// Command starts tiny-go: the program and any leading arguments
	// (default: this executable).
	Command []string
	// Env is the environment the agent and test.sh start from (default
	// os.Environ()).
	Env                       []string
	Repeat, Parallel          int
	AgentTimeout, TestTimeout time.Duration
	// Record and Replay are recording folders (at most one is set).
	Record, Replay string
	// Model is passed as --model; under replay it defaults to the
	// recording's model.
	Model string
	// WorkDir is where task directories are made (default the system's
	// temporary directory); Keep keeps them.
	WorkDir string
	Keep    bool
	// Progress receives one line per run as it starts and ends.
	Progress io.Writer
}

// RunResult is one run of one task.
type RunResult struct {
	Task   string `json:"task"`
	Rep    int    `json:"rep"`
	Passed bool   `json:"passed"`
	Status string `json:"status"`
	// Reason explains a run that did not pass, in one line.
	Reason string `json:"reason,omitzero"`
	// Times in milliseconds: the whole run, setting up the fixture, the
	// agent process and test.sh.
	WallMs  int64 `json:"wallMs"`
	SetupMs int64 `json:"setupMs"`
	AgentMs int64 `json:"agentMs"`
	TestMs  int64 `json:"testMs"`
	// AgentExit and TestExit are exit codes (-1: killed or not run).
	AgentExit int `json:"agentExit"`
	TestExit  int `json:"testExit"`
	Metrics
	// TestOutput is the end of test.sh's output when it failed.
	TestOutput string `json:"testOutput,omitzero"`
	// Dir is the task's directory when it was kept.
	Dir string `json:"dir,omitzero"`
	// Attempts and Workers say how a fleet run went (docs/fleet.md): the
	// number of attempts and the identity of the worker of each.
	Attempts int      `json:"attempts,omitzero"`
	Workers  []string `json:"workers,omitzero"`
}

// Run runs every task Repeat times, Parallel at once, and reports the
// results in task order. A task that cannot be run is reported and never
// stops the others. When ctx is cancelled the runs under way are stopped
// and the report holds what finished.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	started := time.Now()
	type job struct{ task, rep int }
	var jobs []job
	for t := range cfg.Tasks {
		for r := 1; r <= cfg.Repeat; r++ {
			jobs = append(jobs, job{t, r})
		}
	}
	results := make([][]RunResult, len(cfg.Tasks))
	for i := range results {
		results[i] = make([]RunResult, cfg.Repeat)
	}
	done := make([][]bool, len(cfg.Tasks))
	for i := range done {
		done[i] = make([]bool, cfg.Repeat)
	}
	runs := ""
	if cfg.Repeat > 1 {
		runs = fmt.Sprintf(" × %d", cfg.Repeat)
	}
	fmt.Fprintf(cfg.Progress, "eval: %d tasks%s, %d at a time, %s\n", len(cfg.Tasks), runs, cfg.Parallel, cfg.mode())
	var mu sync.Mutex
	begun, finished := 0, 0
	next := make(chan job)
	var wg sync.WaitGroup
	for range cfg.Parallel {
		wg.Go(func() {
			for j := range next {
				mu.Lock()
				begun++
				name := cfg.Tasks[j.task].Name
				if cfg.Repeat > 1 {
					name = fmt.Sprintf("%s #%d", name, j.rep)
				}
				fmt.Fprintf(cfg.Progress, "[%d/%d] start    %s\n", begun, len(jobs), name)
				mu.Unlock()
				res := cfg.runOne(ctx, cfg.Tasks[j.task], j.rep)
				mu.Lock()
				results[j.task][j.rep-1] = res
				done[j.task][j.rep-1] = true
				finished++
				cfg.progress(finished, len(jobs), res)
				mu.Unlock()
			}
		})
	}
feed:
	for _, j := range jobs {
		select {
		case next <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()

	rep := &Report{
		Version:  ReportVersion,
		Started:  started.UTC().Format(time.RFC3339),
		WallMs:   time.Since(started).Milliseconds(),
		Mode:     cfg.mode(),
		Model:    cfg.Model,
		Repeat:   cfg.Repeat,
		Parallel: cfg.Parallel,
	}
	for i, t := range cfg.Tasks {
		var runs []RunResult
		for r := range cfg.Repeat {
			if done[i][r] {
				runs = append(runs, results[i][r])
			}
		}
		if len(runs) > 0 {
			rep.Tasks = append(rep.Tasks, summarize(t.Name, runs))
		}
	}
	rep.Interrupted = ctx.Err() != nil
	return rep, nil
}

func (cfg *Config) defaults() error {
	if cfg.Repeat <= 0 {
		cfg.Repeat = 1
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = 1
	}
	if cfg.AgentTimeout <= 0 {
		cfg.AgentTimeout = DefaultAgentTimeout
	}
	if cfg.TestTimeout <= 0 {
		cfg.TestTimeout = DefaultTestTimeout
	}
	if cfg.Record != "" && cfg.Replay != "" {
		return errors.New("--record and --replay exclude each other")
	}
	if cfg.Record != "" && cfg.Repeat > 1 {
		return errors.New("--record keeps one exchange per task; it cannot be combined with --repeat")
	}
	if len(cfg.Command) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("eval: cannot find the tiny-go executable: %w", err)
		}
		cfg.Command = []string{exe}
	}
	if cfg.Env == nil {
		cfg.Env = os.Environ()
	}
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	for _, dir := range []*string{&cfg.Record, &cfg.Replay, &cfg.WorkDir} {
		if *dir != "" {
			abs, err := filepath.Abs(*dir)
			if err != nil {
				return err
			}
			*dir = abs
		}
	}
	if cfg.Record != "" {
		if err := os.MkdirAll(cfg.Record, 0o755); err != nil {
			return fmt.Errorf("--record: %w", err)
		}
	}
	if cfg.Replay != "" {
		if fi, err := os.Stat(cfg.Replay); err != nil || !fi.IsDir() {
			return fmt.Errorf("--replay %s is not a folder", cfg.Replay)
		}
	}
	return nil
}

func (cfg *Config) mode() string {
	switch {
	case cfg.Record != "":
		return ModeRecord
	case cfg.Replay != "":
		return ModeReplay
	}
	return ModeLive
}

func (cfg *Config) progress(n, total int, r RunResult) {
	name := r.Task
	if cfg.Repeat > 1 {
		name = fmt.Sprintf("%s #%d", r.Task, r.Rep)
	}
	line := fmt.Sprintf("[%d/%d] %-8s %s  %s  %d req  %s tok", n, total, strings.ToUpper(r.Status), name,
		formatMs(r.WallMs), r.Requests, formatCount(r.Tokens.Total()))
	if r.Reason != "" {
		line += "  — " + r.Reason
	}
	fmt.Fprintln(cfg.Progress, line)
}

// runOne runs one task once; every failure is part of the result.
func (cfg *Config) runOne(ctx context.Context, t Task, rep int) (res RunResult) {
	start := time.Now()
	res = RunResult{Task: t.Name, Rep: rep, AgentExit: -1, TestExit: -1, Metrics: Metrics{ToolCalls: map[string]int{}}}
	defer func() {
		res.WallMs = time.Since(start).Milliseconds()
		res.Passed = res.Status == StatusPass
	}()
	fail := func(status, format string, args ...any) RunResult {
		res.Status, res.Reason = status, oneLine(fmt.Sprintf(format, args...))
		return res
	}
	in, err := t.read()
	if err != nil {
		return fail(StatusError, "%v", err)
	}
	var rec *Recording
	if cfg.Replay != "" {
		if rec, err = LoadRecording(cfg.Replay, t.Name); err != nil {
			return fail(StatusError, "%v", err)
		}
	}
	root, err := os.MkdirTemp(cfg.WorkDir, "tiny-go-eval-"+t.Name+"-")
	if err != nil {
		return fail(StatusError, "work directory: %v", err)
	}
	if cfg.Keep {
		res.Dir = root
	} else {
		defer os.RemoveAll(root)
	}
	repo := filepath.Join(root, repoDirName)
	if err := setUp(t, root, repo, cfg.stableEnv()); err != nil {
		return fail(StatusError, "fixture: %v", err)
	}
	res.SetupMs = time.Since(start).Milliseconds()

	// The agent.
	agentStart := time.Now()
	agent, err := cfg.runAgent(ctx, t, in, rec, root, repo)
	res.AgentMs = time.Since(agentStart).Milliseconds()
	res.AgentExit = agent.exit
	if err != nil {
		return fail(StatusError, "%v", err)
	}
	if err := cfg.collect(t, root, repo, agent, &res); err != nil {
		return fail(StatusError, "%v", err)
	}
	switch {
	case ctx.Err() != nil:
		return fail(StatusError, "the eval was interrupted")
	case agent.timedOut:
		return fail(StatusTimeout, "the agent ran out of time (%s)", cfg.AgentTimeout)
	case agent.diverged != "":
		return fail(StatusDiverged, "replay: %s", agent.diverged)
	case rec != nil && agent.sent < len(rec.Exchanges):
		return fail(StatusDiverged, "replay: the agent stopped after %d of %d recorded requests%s", agent.sent, len(rec.Exchanges), agent.why())
	case agent.exit == -1:
		return fail(StatusError, "the agent was killed%s", agent.why())
	}

	// The test.
	testStart := time.Now()
	exit, out, timedOut, err := cfg.runTest(ctx, in.test, root, repo)
	res.TestMs = time.Since(testStart).Milliseconds()
	res.TestExit = exit
	switch {
	case err != nil:
		return fail(StatusError, "test.sh: %v", err)
	case ctx.Err() != nil:
		return fail(StatusError, "the eval was interrupted")
	case timedOut:
		res.TestOutput = out
		return fail(StatusTimeout, "test.sh ran out of time (%s)", cfg.TestTimeout)
	case exit != 0:
		res.TestOutput = out
		return fail(StatusFail, "test.sh exited %d: %s", exit, lastLine(out))
	}
	res.Status = StatusPass
	if agent.exit != 0 {
		res.Reason = fmt.Sprintf("test.sh passed, but the agent exited %d%s", agent.exit, agent.why())
	}
	return res
}

// collect reads what the agent did into res: the session's metrics, the
// cost and the provider's own retries; when recording, it writes the
// recording of the run.
func (cfg *Config) collect(t Task, root, repo string, agent agentRun, res *RunResult) error {
	if path, err := sessionFile(repo); err != nil {
		return err
	} else if path != "" {
		m, err := readMetrics(path)
		if err != nil {
			return err
		}
		res.Metrics = m
	}
	res.CostUSD = agent.cost
	// HTTP sends beyond the attempts are the provider's own retries.
	if extra := agent.sent - res.Requests; extra > 0 {
		res.Retries += extra
	}
	if cfg.Record == "" {
		return nil
	}
	exchanges, err := readExchanges(filepath.Join(root, "exchange.jsonl"))
	if err != nil {
		return fmt.Errorf("recording: %w", err)
	}
	if err := WriteRecording(cfg.Record, &Recording{Version: RecordingVersion, Task: t.Name, Endpoint: endpointOf(cfg.Env), Provider: envValue(cfg.Env, "TINY_PROVIDER"), Exchanges: exchanges}); err != nil {
		return fmt.Errorf("recording: %w", err)
	}
	return nil
}

// stableEnv makes what the agent's commands print the same from run to
// run and machine to machine, so a replay sees what the recording saw:
// commit ids (the fixture's and the agent's commits get a fixed author and
// date), sort orders (ls, sort) and times (UTC).
func (cfg *Config) stableEnv() []string {
	const when = "2026-01-01T00:00:00Z"
	return []string{"LC_ALL=C.UTF-8", "TZ=UTC",
		"GIT_AUTHOR_NAME=tiny-go eval", "GIT_AUTHOR_EMAIL=eval@tiny-go.invalid", "GIT_AUTHOR_DATE=" + when,
		"GIT_COMMITTER_NAME=tiny-go eval", "GIT_COMMITTER_EMAIL=eval@tiny-go.invalid", "GIT_COMMITTER_DATE=" + when,
	}
}

// setUp copies the fixture into repo, makes it a git repository with one
// commit, and copies the optional outside/ folder beside it.
func setUp(t Task, root, repo string, stableEnv []string) error {
	if err := copyTree(filepath.Join(t.Dir, fixtureDir), repo); err != nil {
		return err
	}
	outside := filepath.Join(t.Dir, outsideDir)
	if fi, err := os.Stat(outside); err == nil && fi.IsDir() {
		if err := copyTree(outside, filepath.Join(root, outsideDir)); err != nil {
			return err
		}
	}
	git := func(args ...string) error {
		cmd := exec.Command("git", append(fixtureGitConfig(args[0]), args...)...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), stableEnv...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %s: %v: %s", args[0], err, lastLine(string(out)))
		}
		return nil
	}
	if err := git("init", "-q", "-b", "main"); err != nil {
		return err
	}
	// The agent's session lives in .tiny-agent/; test.sh's git status
	// should not see it.
	if err := os.WriteFile(filepath.Join(repo, ".git", "info", "exclude"), []byte(".tiny-agent/\n"), 0o644); err != nil {
		return err
	}
	if err := git("add", "-A"); err != nil {
		return err
	}
	return git("commit", "-q", "--allow-empty", "-m", "fixture")
}

// fixtureGitConfig is how git runs to make a fixture a repository: no
// signing or hooks of the user's, and no `git gc --auto` left running in
// the background. `add` checks every file into one pack (git's bulk
// check-in of files over core.bigFileThreshold, set for this command
// only): 20,000 files are then one pack, not 20,000 loose objects made.
func fixtureGitConfig(command string) []string {
	c := []string{"-c", "commit.gpgsign=false", "-c", "core.hooksPath=/dev/null", "-c", "gc.auto=0"}
	if command == "add" {
		c = append(c, "-c", "core.bigFileThreshold=1")
	}
	return c
}

// copyTree copies regular files, folders and symbolic links, keeping
// file modes (test scripts stay executable).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case info.Mode()&os.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case info.Mode().IsRegular():
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(target, data, info.Mode().Perm())
		}
		return fmt.Errorf("%s is neither a file, a folder nor a link", path)
	})
}

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
	args = append(args, "--", in.prompt)

	logPath := filepath.Join(root, "eval.log")
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
	log, err := os.ReadFile(logPath)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return run, err
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
	return run, nil
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

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return oneLine(lines[len(lines)-1])
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	// Long enough for a replay's first difference with both excerpts.
	if len(s) > 600 {
		end := 600
		for end > 0 && !isRuneStart(s[end]) {
			end--
		}
		s = s[:end] + "…"
	}
	return s
}
