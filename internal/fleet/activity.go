package fleet

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/tiny-agent/tiny-go/internal/eval"
	"github.com/tiny-agent/tiny-go/internal/gitcmd"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// Activities run tasks on one worker.
type Activities struct {
	Blobs *Blobs
	// TinyGo is the tiny-go executable the agent runs as.
	TinyGo string
	// WorkRoot holds the task workspaces. Every worker of a fleet must use
	// the same path: the workspace path is part of the system prompt, and
	// a resumed step must see the configuration it started with.
	WorkRoot string
	Identity string
	// Env is the environment of the agent (credentials come from here).
	Env []string
	// SyncEvery is how often the session is looked at (default 100ms).
	SyncEvery time.Duration
	// CacheInMemory says the cache (WorkRoot/.cache) is a tmpfs: a base
	// that does not fit there goes to WorkRoot/.cache-disk, and one line
	// on Stderr (default os.Stderr) says so.
	CacheInMemory bool
	Stderr        io.Writer

	casOnce sync.Once
	cas     *contentStore
	full    sync.Once
}

// contents is the worker's content store (its known hashes are shared by
// its tasks).
func (a *Activities) contents() *contentStore {
	a.casOnce.Do(func() {
		a.cas = &contentStore{blobs: a.Blobs, dir: filepath.Join(a.WorkRoot, ".cache", "cas")}
	})
	return a.cas
}

// abortGrace is how long tiny-go has to abort durably after SIGTERM.
const abortGrace = 10 * time.Second

// RunTask runs one attempt of t (the activity).
func (a *Activities) RunTask(ctx context.Context, t Task) (Result, error) {
	info := activity.GetInfo(ctx)
	start := time.Now()
	res := Result{RunResult: eval.RunResult{Task: t.Name, Rep: t.Rep, AgentExit: -1, TestExit: -1,
		Metrics: eval.Metrics{ToolCalls: map[string]int{}}}}
	prefix := "runs/" + unsafeKey.ReplaceAllString(info.WorkflowExecution.ID, "_") + "/" + t.Key
	workers, err := a.addWorker(ctx, prefix)
	if err != nil {
		return res, err
	}
	res.Attempts, res.Workers = int(info.Attempt), workers
	defer func() { res.WallMs = time.Since(start).Milliseconds() }()
	var progress atomic.Int64
	defer beat(ctx, &progress)()

	root := filepath.Join(a.WorkRoot, unsafeKey.ReplaceAllString(info.WorkflowExecution.ID, "_"), t.Key)
	repo := filepath.Join(root, "repo")
	unlock, err := lockDir(root)
	if err != nil {
		return res, err
	}
	defer unlock()
	defer os.RemoveAll(root)
	defer unmount(repo)
	sy := &syncer{blobs: a.Blobs, cas: a.contents(), prefix: prefix, repo: repo, attempt: info.Attempt, progress: &progress}
	evalTask, err := a.setUp(ctx, t, sy, root, repo)
	if err != nil {
		return res, err
	}
	res.SetupMs = time.Since(start).Milliseconds()

	agentStart := time.Now()
	run, err := a.runAgent(ctx, t, sy, root, repo, evalTask, info.Attempt)
	res.AgentMs = time.Since(agentStart).Milliseconds()
	res.AgentExit = run.exit
	res.Uploads, res.UploadBytes, res.UploadMs = sy.uploads, sy.uploadBytes, run.uploadMs
	if err != nil {
		return res, err
	}
	if ctx.Err() != nil {
		// Cancelled (Temporal's Esc) or out of time: tiny-go aborted
		// durably; keep what it committed.
		_ = a.finish(context.WithoutCancel(ctx), &res, sy, prefix, repo)
		return res, ctx.Err()
	}
	if err := a.finish(ctx, &res, sy, prefix, repo); err != nil {
		return res, err
	}
	res.CostUSD = run.cost
	if run.overBudget != "" {
		res.Status, res.Reason = eval.StatusError, run.overBudget
		return res, temporal.NewNonRetryableApplicationError(run.overBudget, ErrBudgetExceeded, nil, res)
	}
	if run.timedOut {
		res.Status, res.Reason = eval.StatusTimeout, fmt.Sprintf("the agent ran out of time (%s)", firstDuration(t.Timeout, eval.DefaultAgentTimeout))
		return res, nil
	}
	if run.exit == -1 {
		return res, fmt.Errorf("tiny-go was killed%s", run.why())
	}
	return a.judge(ctx, t, res, run, evalTask, root, repo)
}

// setUp lays out the task's workspace from the worker's cached base of
// its source, then restores the session and change sets from the blob
// store (a later attempt) or notes the baseline. It returns the eval
// task, whose folder every attempt needs (test.sh), or nil.
func (a *Activities) setUp(ctx context.Context, t Task, sy *syncer, root, repo string) (*eval.Task, error) {
	unmount(repo) // left by a worker of this machine that died
	// .tx: the layers of a command in flight when the last attempt here
	// died; that command is reported interrupted, its changes are lost
	// with them, as on another worker.
	for _, d := range []string{repo, filepath.Join(root, ".upper"), filepath.Join(root, ".ovl"), filepath.Join(root, txLayers), filepath.Join(root, "outside")} {
		if err := os.RemoveAll(d); err != nil {
			return nil, err
		}
	}
	m, resumed, err := sy.load(ctx)
	if err != nil {
		return nil, err
	}
	base, err := a.base(ctx, t, m.Base, root)
	if err != nil {
		return nil, err
	}
	var evalTask *eval.Task
	if t.Source.EvalTask != "" {
		// test.sh and the prompt are read from the cache, never written.
		evalTask = &eval.Task{Name: t.Name, Dir: filepath.Join(base, "task")}
		if _, err := os.Stat(filepath.Join(base, "outside")); err == nil {
			if out, err := exec.CommandContext(ctx, "cp", "-a", "--reflink=auto", filepath.Join(base, "outside"), filepath.Join(root, "outside")).CombinedOutput(); err != nil {
				return nil, fmt.Errorf("copy outside/: %v: %s", err, out)
			}
		}
	}
	if sy.upper, err = layOut(ctx, filepath.Join(base, "repo"), root, repo); err != nil {
		return nil, err
	}
	if resumed {
		return evalTask, sy.restore(ctx, m)
	}
	commit := ""
	if t.Source.Git != "" && t.Source.Commit == "" {
		out, err := gitcmd.Repo(ctx, repo, nil, "rev-parse", "HEAD").Output()
		if err != nil {
			return nil, fmt.Errorf("git rev-parse HEAD: %w", err)
		}
		commit = strings.TrimSpace(string(out))
	}
	return evalTask, sy.baseline(ctx, commit)
}

// base is the folder of the task's base (task/, repo/, outside/): the
// worker's cached one, built on first use. commit is the base commit of
// an earlier attempt, for a git source that names none; without either,
// the base is the branch's head now, built in the task's folder and not
// kept.
func (a *Activities) base(ctx context.Context, t Task, commit, root string) (string, error) {
	src := t.Source
	if src.Git != "" && src.Commit == "" {
		src.Commit = commit
	}
	build := func(dir string) error {
		if err := a.materialize(ctx, src, t.Name, dir); err != nil {
			return err
		}
		return seedCheckpoints(ctx, filepath.Join(dir, "repo"))
	}
	if src.Git != "" && src.Commit == "" {
		dir := filepath.Join(root, ".base")
		if err := os.RemoveAll(dir); err != nil {
			return "", err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
		return dir, build(dir)
	}
	key, _ := json.Marshal(src)
	return a.bases().entry(ctx, string(key), func() int64 { return a.baseNeeds(ctx, src) }, build)
}

// bases is the worker's cache of bases.
func (a *Activities) bases() baseCache {
	c := baseCache{dir: filepath.Join(a.WorkRoot, cacheDir, "bases")}
	if a.CacheInMemory {
		c.disk = filepath.Join(a.WorkRoot, cacheDiskDir, "bases")
		c.full = func() {
			a.full.Do(func() {
				w := a.Stderr
				if w == nil {
					w = os.Stderr
				}
				fmt.Fprintf(w, "tiny-go worker: the memory cache %s is full: bases that do not fit are built on disk in %s (slower to make); give it more room with --cache-memory SIZE\n",
					filepath.Join(a.WorkRoot, cacheDir), filepath.Join(a.WorkRoot, cacheDiskDir))
			})
		}
	}
	return c
}

// baseNeeds is the least room src's base takes: its packed size (a
// fixture or tarball unpacks to more); 0 when unknown.
func (a *Activities) baseNeeds(ctx context.Context, src Source) int64 {
	key := firstString(src.EvalTask, src.Tarball)
	if !a.CacheInMemory || key == "" {
		return 0
	}
	n, _ := a.Blobs.Size(ctx, key)
	return n
}

// judge gives the verdict of a run whose agent ended: by the session's
// outcome, or by the eval task's test.sh.
func (a *Activities) judge(ctx context.Context, t Task, res Result, run agentRun, evalTask *eval.Task, root, repo string) (Result, error) {
	if evalTask == nil {
		res.Status = eval.StatusPass
		if res.Outcome != string(session.OutcomeCompleted) {
			res.Status, res.Reason = eval.StatusFail, fmt.Sprintf("the agent's run ended %s%s", res.Outcome, run.why())
		}
		res.Passed = res.Status == eval.StatusPass
		return res, nil
	}
	_, _, script, err := evalTask.Input()
	if err != nil {
		return res, temporal.NewNonRetryableApplicationError(err.Error(), ErrConfiguration, err)
	}
	testStart := time.Now()
	env := append(append([]string{}, a.Env...), eval.StableEnv()...)
	exit, out, timedOut, err := eval.RunTest(ctx, env, firstDuration(t.TestTimeout, eval.DefaultTestTimeout), script, root, repo)
	res.TestMs = time.Since(testStart).Milliseconds()
	res.TestExit = exit
	switch {
	case err != nil:
		return res, fmt.Errorf("test.sh: %w", err)
	case timedOut:
		res.Status, res.Reason, res.TestOutput = eval.StatusTimeout, "test.sh ran out of time", out
	case exit != 0:
		res.Status, res.Reason, res.TestOutput = eval.StatusFail, testFailed(exit, run), out
	default:
		res.Status = eval.StatusPass
	}
	res.Passed = res.Status == eval.StatusPass
	return res, nil
}

// testFailed is the reason of a task whose test.sh exited with exit: with
// the agent's exit and last line when it failed too (often why: a refused
// session or endpoint did nothing).
func testFailed(exit int, run agentRun) string {
	if run.exit > 0 {
		return fmt.Sprintf("test.sh exited %d (the agent exited %d%s)", exit, run.exit, run.why())
	}
	return fmt.Sprintf("test.sh exited %d", exit)
}

// addWorker records this worker as the one of this attempt and returns
// the workers of every attempt so far.
func (a *Activities) addWorker(ctx context.Context, prefix string) ([]string, error) {
	key := prefix + "/workers.json"
	var workers []string
	if b, ok, err := a.Blobs.Get(ctx, key); err != nil {
		return nil, err
	} else if ok {
		if err := json.Unmarshal(b, &workers); err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
	}
	attempt := int(activity.GetInfo(ctx).Attempt)
	for len(workers) < attempt-1 {
		workers = append(workers, "?") // an attempt that died before it wrote
	}
	workers = append(workers[:attempt-1], a.Identity)
	b, _ := json.Marshal(workers)
	return workers, a.Blobs.Put(ctx, key, b)
}

// materialize makes the base of src in dir: dir/repo, a git repository
// whose HEAD is the base of the final diff, and for an eval task its
// folder dir/task (and dir/outside).
func (a *Activities) materialize(ctx context.Context, src Source, name, dir string) error {
	repo := filepath.Join(dir, "repo")
	git := func(dir string, args ...string) error {
		cmd := exec.CommandContext(ctx, "git", append(eval.FixtureGitConfig(args[0]), args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), eval.StableEnv()...)
		if out, err := cmd.CombinedOutput(); err != nil {
			err = fmt.Errorf("git %s: %v: %s", args[0], err, strings.TrimSpace(string(out)))
			return temporal.NewNonRetryableApplicationError(err.Error(), ErrConfiguration, err)
		}
		return nil
	}
	switch {
	case src.EvalTask != "":
		task := eval.Task{Name: name, Dir: filepath.Join(dir, "task")}
		if err := a.unpackKey(ctx, src.EvalTask, task.Dir); err != nil {
			return err
		}
		// The fixture becomes the repository by a rename, not a second
		// copy of every file (eval.SetUp then copies an empty folder and
		// makes it a git repository as ever).
		fixture := filepath.Join(task.Dir, "fixture")
		if err := os.Rename(fixture, repo); err != nil {
			return fmt.Errorf("the task folder has no fixture/: %w", err)
		}
		if err := os.Mkdir(fixture, 0o755); err != nil {
			return err
		}
		if err := eval.SetUp(task, dir, repo); err != nil {
			return temporal.NewNonRetryableApplicationError(err.Error(), ErrConfiguration, err)
		}
		return nil
	case src.Git != "":
		if err := git(dir, "clone", "-q", src.Git, repo); err != nil {
			return err
		}
		if src.Commit != "" {
			return git(repo, "checkout", "-q", "--detach", src.Commit)
		}
		return nil
	case src.Tarball != "":
		if err := a.unpackKey(ctx, src.Tarball, repo); err != nil {
			return err
		}
		if _, err := os.Stat(filepath.Join(repo, ".git")); err == nil {
			return nil
		}
		for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "-A"}, {"commit", "-q", "--allow-empty", "-m", "base"}} {
			if err := git(repo, args...); err != nil {
				return err
			}
		}
		return nil
	}
	return temporal.NewNonRetryableApplicationError("the task has no workspace source (git, tarball or eval task)", ErrConfiguration, nil)
}

func (a *Activities) unpackKey(ctx context.Context, key, dir string) error {
	data, ok, err := a.Blobs.Get(ctx, key)
	if err != nil {
		return err
	}
	if !ok {
		return temporal.NewNonRetryableApplicationError("blob store has no "+key, ErrConfiguration, nil)
	}
	return unpackDir(data, dir)
}

// finish reads the metrics of the final session and stores the session,
// its sidecar folder and the workspace diff.
func (a *Activities) finish(ctx context.Context, res *Result, sy *syncer, prefix, repo string) error {
	path, err := sessionPath(repo)
	if err != nil || path == "" {
		return err
	}
	m, err := eval.ReadMetrics(path)
	if err != nil {
		return err
	}
	res.Metrics = m
	res.Outcome = m.Outcome
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	res.Session = prefix + "/" + filepath.Base(path)
	if err := a.Blobs.Put(ctx, res.Session, data); err != nil {
		return err
	}
	side := strings.TrimSuffix(path, ".jsonl") + ".d"
	if _, err := os.Stat(side); err == nil {
		tree, err := packDir(side, nil)
		if err != nil {
			return err
		}
		res.Sidecar = prefix + "/" + filepath.Base(side) + ".tar.gz"
		if err := a.Blobs.Put(ctx, res.Sidecar, tree); err != nil {
			return err
		}
	}
	// The agent could plant programs in the repository's config or
	// attributes: gitcmd.Diff runs none of them.
	diff, err := gitcmd.Diff(ctx, repo, ".", ":(exclude).tiny-agent")
	if err != nil {
		return err
	}
	res.Diff = prefix + "/diff.patch"
	return a.Blobs.Put(ctx, res.Diff, diff)
}

func (s *syncer) state() *session.State {
	if s.reducer == nil {
		return nil
	}
	return s.reducer.State()
}

// lockDir makes root and takes its lock: two attempts of one task never
// share a workspace on one machine.
func lockDir(root string) (unlock func(), err error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(filepath.Dir(root), "."+filepath.Base(root)+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("another attempt of this task runs on this machine: %w", err)
	}
	return func() { f.Close() }, nil
}

// eventLog keeps the agent's --json events for the blob store.
type eventLog struct {
	mu   sync.Mutex
	buf  []byte
	sent int
}

func (e *eventLog) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.buf = append(e.buf, p...)
	return len(p), nil
}

func (e *eventLog) len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.buf)
}

func (e *eventLog) bytes() []byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]byte(nil), e.buf...)
}

func hasFlag(args []string, name string) bool {
	for _, a := range args {
		if a == name || strings.HasPrefix(a, name+"=") {
			return true
		}
	}
	return false
}

func firstDuration(ds ...time.Duration) time.Duration {
	for _, d := range ds {
		if d > 0 {
			return d
		}
	}
	return 0
}

// LoadTasks reads the tasks from..to of a big suite's task list.
func (a *Activities) LoadTasks(ctx context.Context, key string, from, to int) ([]Task, error) {
	b, ok, err := a.Blobs.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, temporal.NewNonRetryableApplicationError("blob store has no "+key, ErrConfiguration, nil)
	}
	var tasks []Task
	if err := json.Unmarshal(b, &tasks); err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	if from < 0 || to > len(tasks) || from > to {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s holds %d tasks, not %d..%d", key, len(tasks), from, to), ErrConfiguration, nil)
	}
	return tasks[from:to], nil
}
