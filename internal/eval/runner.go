package eval

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
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
	cfg.runJobs(ctx, jobs, results, done)

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

// job is one run of a task: the task's index and the repetition (from 1).
type job struct{ task, rep int }

// runJobs runs the jobs Parallel at once, filling results and done, until
// they are all run or ctx is cancelled.
func (cfg *Config) runJobs(ctx context.Context, jobs []job, results [][]RunResult, done [][]bool) {
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
	if status, reason := cfg.agentVerdict(ctx, agent, rec); status != "" {
		return fail(status, "%s", reason)
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

// agentVerdict says why the run ends after the agent, without its test
// (the status and reason), or nothing when the test is to run.
func (cfg *Config) agentVerdict(ctx context.Context, agent agentRun, rec *Recording) (status, reason string) {
	switch {
	case ctx.Err() != nil:
		return StatusError, "the eval was interrupted"
	case agent.timedOut:
		return StatusTimeout, fmt.Sprintf("the agent ran out of time (%s)", cfg.AgentTimeout)
	case agent.diverged != "":
		return StatusDiverged, "replay: " + agent.diverged
	case rec != nil && agent.sent < len(rec.Exchanges):
		return StatusDiverged, fmt.Sprintf("replay: the agent stopped after %d of %d recorded requests%s", agent.sent, len(rec.Exchanges), agent.why())
	case agent.exit == -1:
		return StatusError, "the agent was killed" + agent.why()
	}
	return "", ""
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
