package fleet_test

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/checkpoint"
	"github.com/tiny-agent/tiny-go/internal/eval"
	"github.com/tiny-agent/tiny-go/internal/fleet"
	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/testenv"
)

// cluster is a Temporal dev server, a scripted model server, a file://
// blob store and the binaries, all on this machine.
type cluster struct {
	t        *testing.T
	bin      string // folder of tiny-go and tiny-go-fleet
	hostPort string
	blobDir  string
	workDir  string
	model    *providertest.Server
	workers  []*exec.Cmd
	logs     []*bytes.Buffer
}

func needTemporal(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a Temporal server and worker processes; run without -short")
	}
	path, err := exec.LookPath("temporal")
	if err != nil {
		if gobin := filepath.Join(goEnv(t, "GOPATH"), "bin", "temporal"); fileExists(gobin) {
			return gobin
		}
		t.Skip("temporal CLI not installed (go install github.com/temporalio/cli/cmd/temporal@v1.5.1)")
	}
	return path
}

func goEnv(t *testing.T, name string) string {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func newCluster(t *testing.T, temporal string) *cluster {
	dir := t.TempDir()
	c := &cluster{t: t, bin: filepath.Join(dir, "bin"), blobDir: filepath.Join(dir, "blobs"), workDir: filepath.Join(dir, "work")}
	for _, d := range []string{c.bin, c.blobDir, c.workDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The workers keep their cache in a tmpfs they mount (--cache-memory
	// auto); it outlives them.
	t.Cleanup(func() {
		for testenv.Unmount(filepath.Join(c.workDir, ".cache")) == nil {
		}
	})
	build := exec.Command("go", "build", "-o", c.bin, "./cmd/tiny-go", "./cmd/tiny-go-fleet")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	port := freePort(t)
	c.hostPort = fmt.Sprintf("127.0.0.1:%d", port)
	srv := exec.Command(temporal, "server", "start-dev", "--headless", "--ip", "127.0.0.1", "--port", strconv.Itoa(port),
		"--db-filename", filepath.Join(dir, "temporal.db"), "--log-level", "error")
	var srvLog bytes.Buffer
	srv.Stdout, srv.Stderr = &srvLog, &srvLog
	srv.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-srv.Process.Pid, syscall.SIGKILL)
		_ = srv.Wait()
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", c.hostPort, time.Second)
		if err == nil {
			conn.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Temporal dev server did not listen on %s: %s", c.hostPort, srvLog.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	c.model = providertest.New(t)
	c.model.Respond(markerTask)
	return c
}

func (c *cluster) env(extra ...string) []string {
	env := []string{}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TINY_") || strings.HasPrefix(kv, "OPENROUTER_") || strings.HasPrefix(kv, "ANTHROPIC_") || strings.HasPrefix(kv, "OTEL_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, append([]string{"TINY_API_KEY=fleet-test-key", "TINY_MODEL=fleet/test"}, extra...)...)
}

// startWorker starts worker process n.
func (c *cluster) startWorker(n, concurrency int, extra ...string) {
	cmd := exec.Command(filepath.Join(c.bin, "tiny-go"), append([]string{"worker", "--temporal", c.hostPort, "--blob", "file://" + c.blobDir,
		"--work-dir", c.workDir, "--concurrency", strconv.Itoa(concurrency), "--identity", fmt.Sprintf("w%d", n)}, extra...)...)
	cmd.Env = c.env()
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.workers = append(c.workers, cmd)
	c.logs = append(c.logs, &log)
	c.t.Cleanup(func() {
		if c.t.Failed() {
			c.t.Logf("worker w%d:\n%s", n, log.String())
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
}

// markerTask is the scripted model: each task "fleet task NN" runs three
// bash steps; each writes a marker line unique to its call into
// markers.txt, sleeps, and reports "done step K". A step whose result is
// not a success (interrupted by a dead worker) is asked for again, with a
// new call. A task marked "(slow step N)" sleeps in step N long enough
// to be killed in.
func markerTask(r providertest.Request) providertest.Reply {
	task := regexp.MustCompile(`fleet task (\d+)`).FindStringSubmatch(string(r.Body))
	if task == nil {
		return providertest.Reply{Text: "no task"}
	}
	done := 0
	for _, m := range r.Chat.Messages {
		if m.Role == "tool" && m.Content != nil {
			if d := regexp.MustCompile(`done step (\d+)`).FindStringSubmatch(*m.Content); d != nil {
				k, _ := strconv.Atoi(d[1])
				done = max(done, k)
			}
		}
	}
	u := &providertest.Usage{PromptTokens: 100, CompletionTokens: 10}
	if done >= 3 {
		return providertest.Reply{Text: "all three steps are done", Usage: u}
	}
	step := done + 1
	sleep := "0.2"
	if strings.Contains(string(r.Body), fmt.Sprintf("(slow step %d)", step)) {
		sleep = "6"
	}
	id := fmt.Sprintf("c%s-s%d-m%d", task[1], step, len(r.Chat.Messages))
	cmd := fmt.Sprintf(`echo "task-%s step %d call %s" >> markers.txt && sleep %s && echo "done step %d"`, task[1], step, id, sleep, step)
	args, _ := json.Marshal(map[string]string{"command": cmd})
	return providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: id, Name: "bash", Arguments: string(args)}}, Usage: u}
}

// writeSuite makes n eval tasks under dir/suite. test.sh checks the
// three steps are in markers.txt and no marker line is there twice.
func writeSuite(t *testing.T, dir string, n, slow int) string {
	suite := filepath.Join(dir, "suite")
	for i := 1; i <= n; i++ {
		task := filepath.Join(suite, fmt.Sprintf("task%02d", i))
		if err := os.MkdirAll(filepath.Join(task, "fixture"), 0o755); err != nil {
			t.Fatal(err)
		}
		mark := ""
		if i == slow {
			mark = " (slow step 2)"
		}
		files := map[string]string{
			"prompt.txt":     fmt.Sprintf("This is fleet task %02d: run the three steps.%s\n", i, mark),
			"fixture/README": "a fleet test workspace\n",
			"test.sh":        "set -e\nfor k in 1 2 3; do grep -q \"step $k call\" markers.txt; done\n[ -z \"$(sort markers.txt | uniq -d)\" ]\n",
		}
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(task, name), []byte(body), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	return suite
}

// descendants are pid and the processes below it.
func descendants(pid int) []int {
	parent := map[int]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		rest := stat[bytes.LastIndexByte(stat, ')')+2:]
		f := strings.Fields(string(rest))
		if len(f) > 1 {
			parent[p], _ = strconv.Atoi(f[1])
		}
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		for p, pp := range parent {
			if pp == out[i] {
				out = append(out, p)
			}
		}
	}
	return out
}

// owner is the index of the worker whose process tree has a process
// working in dir (-1 if none).
func (c *cluster) owner(dir string) int {
	for i, w := range c.workers {
		for _, p := range descendants(w.Process.Pid) {
			if cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", p)); err == nil && strings.HasPrefix(cwd, dir) {
				return i
			}
		}
	}
	return -1
}

// processes lists each worker's processes and where they work.
func (c *cluster) processes() string {
	var b strings.Builder
	for i, w := range c.workers {
		fmt.Fprintf(&b, "\nw%d:", i+1)
		for _, p := range descendants(w.Process.Pid) {
			comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", p))
			cwd, _ := os.Readlink(fmt.Sprintf("/proc/%d/cwd", p))
			fmt.Fprintf(&b, " %d %s in %s;", p, strings.TrimSpace(string(comm)), cwd)
		}
	}
	return b.String()
}

func TestSuiteSurvivesAKilledWorker(t *testing.T) {
	temporal := needTemporal(t)
	c := newCluster(t, temporal)
	const tasks = 12
	suite := writeSuite(t, t.TempDir(), tasks, 5)
	// Two tasks per worker: the kill takes task05 and whatever task its
	// worker runs beside it, anywhere in its run (TestTwoTasksOfAKilled-
	// WorkerComeBack kills one in its first step on purpose).
	for i := 1; i <= 3; i++ {
		c.startWorker(i, 2)
	}

	submit := exec.Command(filepath.Join(c.bin, "tiny-go"), "eval", suite, "--temporal", c.hostPort, "--blob", "file://"+c.blobDir,
		"--endpoint", c.model.URL(), "--heartbeat-timeout", "5s", "--timeout", "2m", "--json")
	submit.Env = c.env()
	var stdout, stderr bytes.Buffer
	submit.Stdout, submit.Stderr = &stdout, &stderr
	started := time.Now()
	if err := submit.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- submit.Wait() }()

	// Kill the worker of task 05 once its step 2 is under way: the worker,
	// its tiny-go and the bash command, all at once, as if the machine
	// were gone.
	killed := ""
	deadline := time.Now().Add(2 * time.Minute)
	for killed == "" {
		if time.Now().After(deadline) {
			t.Fatalf("task05 step 2 never started; eval: %s", stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
		// The command runs as a transaction: what it wrote is in the
		// workspace (journaled), or in its upper layer beside it.
		matches := markerFiles(c, "task05")
		if len(matches) == 0 {
			continue
		}
		data, _ := os.ReadFile(matches[0])
		if !strings.Contains(string(data), "task-05 step 2") {
			continue
		}
		time.Sleep(time.Second) // toolStarted is in the store by now
		repo := filepath.Dir(matches[0])
		if filepath.Base(repo) == "upper" {
			repo = filepath.Join(repo, "..", "..", "..", "repo")
		}
		w := c.owner(repo)
		if w < 0 {
			t.Fatalf("no worker runs task05 (no process works in its repo): %s", c.processes())
		}
		for _, p := range descendants(c.workers[w].Process.Pid) {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		killed = fmt.Sprintf("w%d", w+1)
		t.Logf("killed worker %s mid-command", killed)
	}

	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("eval: %v\n%s", err, stderr.String())
		}
	case <-time.After(4 * time.Minute):
		t.Fatalf("the suite did not finish: %s", stderr.String())
	}
	elapsed := time.Since(started)
	t.Logf("%d tasks in %s with 3 workers (one killed): %.1f tasks/min", tasks, elapsed.Round(time.Millisecond), tasks/elapsed.Minutes())

	var rep struct {
		Tasks []struct {
			Name string
			Runs []struct {
				Task     string   `json:"task"`
				Passed   bool     `json:"passed"`
				Reason   string   `json:"reason"`
				Attempts int      `json:"attempts"`
				Workers  []string `json:"workers"`
			} `json:"runs"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("eval --json: %v\n%s", err, stdout.String())
	}
	if len(rep.Tasks) != tasks {
		t.Fatalf("report has %d tasks, want %d:\n%s", len(rep.Tasks), tasks, stdout.String())
	}
	attempts := map[string]int{}
	for _, task := range rep.Tasks {
		r := task.Runs[0]
		attempts[r.Task] = r.Attempts
		if !r.Passed {
			t.Errorf("%s did not pass: %s", r.Task, r.Reason)
		}
		if r.Attempts < 1 || len(r.Workers) != r.Attempts {
			t.Errorf("%s: %d attempts but workers %v", r.Task, r.Attempts, r.Workers)
		}
		if r.Task == "task05" {
			if r.Attempts < 2 || !slices.Contains(r.Workers, killed) || r.Workers[len(r.Workers)-1] == killed {
				t.Errorf("task05 ran %d attempts on %v; want one on the killed worker %s, the last on another", r.Attempts, r.Workers, killed)
			}
		}
	}

	// Every final session reduces cleanly; the killed task's shows one
	// recovery (its interrupted command), and every marker is written once.
	sessions, _ := filepath.Glob(filepath.Join(c.blobDir, "runs", "*", "task*-1", "2*.jsonl"))
	if len(sessions) != tasks {
		t.Fatalf("%d final sessions in the blob store, want %d", len(sessions), tasks)
	}
	for _, path := range sessions {
		key := filepath.Base(filepath.Dir(path))
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		st, corrupt := session.Reduce(data)
		if corrupt != nil {
			t.Errorf("%s: session does not reduce: %s", key, corrupt.Describe())
			continue
		}
		if st.Operation != nil || st.LastFinished.Outcome != session.OutcomeCompleted {
			t.Errorf("%s: session ends %q, open=%v", key, st.LastFinished.Outcome, st.Operation != nil)
		}
		// An attempt that dies mid-command leaves one interrupted command:
		// task05's first (the kill), and one whose heartbeat was late on
		// a busy machine (5 s here; its next attempt takes over).
		interrupted := strings.Count(string(data), `"reason":"interrupted"`)
		if key == "task05-1" && interrupted < 1 {
			t.Errorf("task05: no interrupted command in its session, want the killed one")
		}
		if n := attempts[strings.TrimSuffix(key, "-1")]; interrupted > n-1 {
			t.Errorf("%s: %d interrupted commands in %d attempts", key, interrupted, n)
		}
		diff, err := os.ReadFile(filepath.Join(filepath.Dir(path), "diff.patch"))
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		sc := bufio.NewScanner(bytes.NewReader(diff))
		for sc.Scan() {
			if m, ok := strings.CutPrefix(sc.Text(), "+task-"); ok {
				seen[m]++
			}
		}
		steps := 0
		for m, n := range seen {
			if n != 1 {
				t.Errorf("%s: marker %q written %d times", key, m, n)
			}
			steps++
		}
		if steps < 3 {
			t.Errorf("%s: %d markers in the final diff, want at least 3:\n%s", key, steps, diff)
		}
		// The agent's commands ran as transactions over the workspace
		// overlay (their layers beside it), not on the watcher fallback.
		// A task that was on the killed worker (it runs two at a time:
		// task05 and maybe another) keeps the records of its last
		// attempt's steps only, maybe none (docs/fleet.md).
		if attempts[strings.TrimSuffix(key, "-1")] > 1 {
			continue
		}
		if n := txRecords(t, strings.TrimSuffix(path, ".jsonl")+".d.tar.gz"); n < 3 {
			t.Errorf("%s: %d records of command transactions in its checkpoint index, want some for each step", key, n)
		}
	}

	// One job with `tiny-go run --temporal`: its --json events stream to
	// stdout, and the result names its worker.
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "README"), []byte("job\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := exec.Command(filepath.Join(c.bin, "tiny-go"), "run", "--temporal", c.hostPort, "--blob", "file://"+c.blobDir,
		"--endpoint", c.model.URL(), "--dir", ws, "This is fleet task 99: run the three steps.")
	run.Env = c.env()
	var runOut, runErr bytes.Buffer
	run.Stdout, run.Stderr = &runOut, &runErr
	if err := run.Run(); err != nil {
		t.Fatalf("tiny-go run --temporal: %v\n%s", err, runErr.String())
	}
	var kinds []string
	for _, line := range strings.Split(strings.TrimSpace(runOut.String()), "\n") {
		var ev struct{ Type string }
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("run --temporal printed a line that is not a JSON event: %q", line)
		}
		kinds = append(kinds, ev.Type)
	}
	if len(kinds) < 4 || !strings.Contains(runErr.String(), "pass after 1 attempt(s)") {
		t.Errorf("run --temporal: events %v\n%s", kinds, runErr.String())
	}

	// Over its token budget a job stops at once and is not retried.
	over := exec.Command(filepath.Join(c.bin, "tiny-go"), "run", "--temporal", c.hostPort, "--blob", "file://"+c.blobDir,
		"--endpoint", c.model.URL(), "--dir", ws, "--max-tokens", "150", "This is fleet task 98: run the three steps.")
	over.Env = c.env()
	var overErr bytes.Buffer
	over.Stderr = &overErr
	err := over.Run()
	if code := over.ProcessState.ExitCode(); err == nil || code != 1 || !strings.Contains(overErr.String(), "budget exceeded: 220 tokens used, the limit is 150") ||
		!strings.Contains(overErr.String(), "after 1 attempt(s)") {
		t.Errorf("run --temporal --max-tokens 150: exit %d\n%s", code, overErr.String())
	}
}

// txRecords counts the records of transactions in the checkpoint index
// in a session's sidecar archive (before and after a command; none on
// the watcher fallback).
func txRecords(t *testing.T, archive string) int {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	n := 0
	for {
		hdr, err := tr.Next()
		if err != nil {
			return n
		}
		if path.Base(hdr.Name) != checkpoint.IndexFile {
			continue
		}
		data, _ := io.ReadAll(tr)
		for line := range strings.SplitSeq(string(data), "\n") {
			if strings.Contains(line, `"tx":`) {
				n++
			}
		}
	}
}

// TestFleetThroughput measures tasks/min with 1 and then 3 workers (one
// task at a time each) on a 12-task suite, and what the blob store costs
// per task (docs/fleet.md). It only runs with TINY_FLEET_BENCH=1:
//
//	TINY_FLEET_BENCH=1 go test -count=1 -run TestFleetThroughput -v ./internal/fleet
func TestFleetThroughput(t *testing.T) {
	if os.Getenv("TINY_FLEET_BENCH") == "" {
		t.Skip("a measurement; set TINY_FLEET_BENCH=1")
	}
	temporal := needTemporal(t)
	c := newCluster(t, temporal)
	const tasks = 12
	suite := writeSuite(t, t.TempDir(), tasks, 0)
	loaded, err := eval.LoadTasks([]string{suite})
	if err != nil {
		t.Fatal(err)
	}
	conn := fleet.Conn{HostPort: c.hostPort, Blob: "file://" + c.blobDir}
	ctx := context.Background()
	// The reference: the same suite with plain `tiny-go eval --parallel N`.
	for _, parallel := range []int{1, 3} {
		local := exec.Command(filepath.Join(c.bin, "tiny-go"), "eval", suite, "--parallel", strconv.Itoa(parallel))
		local.Env = c.env("TINY_ENDPOINT=" + c.model.URL())
		started := time.Now()
		if out, err := local.CombinedOutput(); err != nil {
			t.Fatalf("tiny-go eval: %v\n%s", err, out)
		}
		elapsed := time.Since(started)
		t.Logf("local eval --parallel %d: %d tasks in %s = %.1f tasks/min", parallel, tasks, elapsed.Round(time.Millisecond), tasks/elapsed.Minutes())
	}
	for _, workers := range []int{1, 3} {
		for len(c.workers) < workers {
			c.startWorker(len(c.workers)+1, 1)
		}
		started := time.Now()
		id, err := fleet.SubmitSuite(ctx, conn, loaded, 1, fleet.Settings{Endpoint: c.model.URL(), Timeout: 2 * time.Minute}, "")
		if err != nil {
			t.Fatal(err)
		}
		_, results, _, err := fleet.Watch(ctx, conn, id, true, func(int, int, int, fleet.Result) {}, nil)
		if err != nil {
			t.Fatal(err)
		}
		elapsed := time.Since(started)
		var uploads, ms, bytes, agentMs int64
		for _, r := range results {
			if !r.Passed {
				t.Errorf("%s: %s", r.Task, r.Reason)
			}
			uploads += int64(r.Uploads)
			ms += r.UploadMs
			bytes += r.UploadBytes
			agentMs += r.AgentMs
		}
		n := int64(len(results))
		t.Logf("%d worker(s): %d tasks in %s = %.1f tasks/min; per task: agent %d ms, %d blob writes, %d KiB, %d ms syncing",
			workers, n, elapsed.Round(time.Millisecond), float64(n)/elapsed.Minutes(), agentMs/n, uploads/n, bytes/n/1024, ms/n)
	}
}
