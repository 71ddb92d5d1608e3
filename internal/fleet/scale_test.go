package fleet_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"

	"github.com/tiny-agent/tiny-go/internal/eval"
	"github.com/tiny-agent/tiny-go/internal/fleet"
)

// quickSuite makes n eval tasks the scripted model answers at once (no
// tool call): what a suite's bookkeeping costs, without agent work.
func quickSuite(t *testing.T, n int) string {
	suite := filepath.Join(t.TempDir(), "suite")
	for i := 1; i <= n; i++ {
		task := filepath.Join(suite, fmt.Sprintf("q%05d", i))
		if err := os.MkdirAll(filepath.Join(task, "fixture"), 0o755); err != nil {
			t.Fatal(err)
		}
		for name, body := range map[string]string{"prompt.txt": "answer at once\n", "fixture/README": "q\n", "test.sh": "true\n"} {
			if err := os.WriteFile(filepath.Join(task, name), []byte(body), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	return suite
}

// A suite bigger than a batch runs as child workflows: the suite's own
// history schedules no task, every result streams to `tiny-go eval` and
// `eval status` has them all.
func TestSuiteRunsInBatches(t *testing.T) {
	c := newCluster(t, needTemporal(t))
	const tasks = 7
	suite := quickSuite(t, tasks)
	c.startWorker(1, 3)
	submit := exec.Command(filepath.Join(c.bin, "tiny-go"), "eval", suite, "--temporal", c.hostPort, "--blob", "file://"+c.blobDir,
		"--endpoint", c.model.URL(), "--json")
	submit.Env = c.env("TINY_FLEET_BATCH=3")
	var stdout, stderr bytes.Buffer
	submit.Stdout, submit.Stderr = &stdout, &stderr
	if err := submit.Run(); err != nil {
		t.Fatalf("eval: %v\n%s", err, stderr.String())
	}
	if n := len(regexp.MustCompile(`(?m)^\[\d+/7\] PASS`).FindAllString(stderr.String(), -1)); n != tasks {
		t.Errorf("%d results streamed, want %d:\n%s", n, tasks, stderr.String())
	}
	id := regexp.MustCompile(`tiny-go-eval-[0-9TZ.]+`).FindString(stderr.String())
	if id == "" {
		t.Fatalf("no suite id in: %s", stderr.String())
	}
	status := exec.Command(filepath.Join(c.bin, "tiny-go"), "eval", "status", id, "--temporal", c.hostPort, "--json")
	status.Env = c.env()
	out, err := status.Output()
	if err != nil {
		t.Fatalf("eval status: %v", err)
	}
	for name, rep := range map[string][]byte{"eval": stdout.Bytes(), "eval status": out} {
		var r struct {
			Tasks []struct {
				Runs []struct{ Passed bool } `json:"runs"`
			} `json:"tasks"`
		}
		if err := json.Unmarshal(rep, &r); err != nil {
			t.Fatalf("%s --json: %v\n%s", name, err, rep)
		}
		passed := 0
		for _, task := range r.Tasks {
			for _, run := range task.Runs {
				if run.Passed {
					passed++
				}
			}
		}
		if passed != tasks {
			t.Errorf("%s reports %d passed runs, want %d:\n%s", name, passed, tasks, rep)
		}
	}
	activities, children := suiteHistory(t, c, id)
	if activities != 0 || children != 3 {
		t.Errorf("the suite's history schedules %d tasks and %d children; want 0 and 3 batches", activities, children)
	}
}

// suiteHistory counts the tasks and the child workflows the history of
// workflow id schedules.
func suiteHistory(t *testing.T, c *cluster, id string) (activities, children int) {
	cl, err := client.Dial(client.Options{HostPort: c.hostPort})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	it := cl.GetWorkflowHistory(context.Background(), id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			activities++
		case enumspb.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
			children++
		}
	}
	return activities, children
}

// bigFixture fills the fixture of the one task of suite with n files of
// 1 KB in folders of 100.
func bigFixture(t *testing.T, suite string, n int) {
	fixture := filepath.Join(suite, "task01", "fixture")
	line := bytes.Repeat([]byte("0123456789abcdef"), 64)
	for i := range n {
		dir := filepath.Join(fixture, fmt.Sprintf("d%03d", i/100))
		if i%100 == 0 {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		body := append([]byte(strconv.Itoa(i)), line...)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.txt", i%100)), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// TestFleetAtRepositoryScale measures a task over a 20,000-file, 20 MB
// fixture against one over a 1-file fixture (3 bash steps each, one
// worker): the cost per step, the setup the first time and after, the
// blob store's growth per repeated task, and heartbeat time-outs over
// 20 runs with a 3 s --heartbeat-timeout (docs/performance.md). It only
// runs with TINY_FLEET_BENCH=1:
//
//	TINY_FLEET_BENCH=1 go test -count=1 -run TestFleetAtRepositoryScale -v -timeout 40m ./internal/fleet
//
// The worker keeps its cache in memory (--cache-memory auto, docs/fleet.md);
// TINY_FLEET_CACHE_MEMORY=off (or a size) starts it with --cache-memory
// off (or that size).
func TestFleetAtRepositoryScale(t *testing.T) {
	if os.Getenv("TINY_FLEET_BENCH") == "" {
		t.Skip("a measurement; set TINY_FLEET_BENCH=1")
	}
	c := newCluster(t, needTemporal(t))
	var extra []string
	if size := os.Getenv("TINY_FLEET_CACHE_MEMORY"); size != "" {
		extra = []string{"--cache-memory", size}
	}
	c.startWorker(1, 1, extra...)
	conn := fleet.Conn{HostPort: c.hostPort, Blob: "file://" + c.blobDir}
	ctx := context.Background()
	files, _ := strconv.Atoi(os.Getenv("TINY_FLEET_FILES"))
	if files <= 0 {
		files = 20000
	}
	runs := 20
	small := writeSuite(t, t.TempDir(), 1, 0)
	big := writeSuite(t, t.TempDir(), 1, 0)
	bigFixture(t, big, files)
	settings := fleet.Settings{Endpoint: c.model.URL(), Timeout: 5 * time.Minute, HeartbeatTimeout: 3 * time.Second}
	suite := func(dir string, repeat int) []fleet.Result {
		loaded, err := eval.LoadTasks([]string{dir})
		if err != nil {
			t.Fatal(err)
		}
		id, err := fleet.SubmitSuite(ctx, conn, loaded, repeat, settings, "")
		if err != nil {
			t.Fatal(err)
		}
		_, results, _, err := fleet.Watch(ctx, conn, id, true, func(int, int, int, fleet.Result) {}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return results
	}
	mean := func(rs []fleet.Result, f func(fleet.Result) int64) float64 {
		var sum int64
		for _, r := range rs {
			sum += f(r)
		}
		return float64(sum) / float64(len(rs))
	}
	agent := func(r fleet.Result) int64 { return r.AgentMs }
	setup := func(r fleet.Result) int64 { return r.SetupMs }
	sync := func(r fleet.Result) int64 { return r.UploadMs }

	// The reference: tiny-go's own cost in each tree, under plain
	// `tiny-go eval` on this machine (no fleet).
	local := func(dir string) float64 {
		cmd := exec.Command(filepath.Join(c.bin, "tiny-go"), "eval", dir, "--repeat", "3", "--json")
		cmd.Env = c.env("TINY_ENDPOINT=" + c.model.URL())
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("tiny-go eval: %v", err)
		}
		var rep struct {
			Tasks []struct {
				Runs []struct {
					AgentMs int64 `json:"agentMs"`
				} `json:"runs"`
			} `json:"tasks"`
		}
		if err := json.Unmarshal(out, &rep); err != nil || len(rep.Tasks) != 1 {
			t.Fatalf("tiny-go eval --json: %v", err)
		}
		var sum int64
		for _, r := range rep.Tasks[0].Runs {
			sum += r.AgentMs
		}
		return float64(sum) / float64(len(rep.Tasks[0].Runs))
	}
	localSmall, localBig := local(small), local(big)
	smallRuns := suite(small, 5)
	first := suite(big, 1) // a cold worker: the base is built and cached
	before := dirSize(c.blobDir)
	bigRuns := suite(big, runs)
	grown := dirSize(c.blobDir) - before
	timeouts := 0
	for _, r := range append(append(smallRuns, first...), bigRuns...) {
		if !r.Passed {
			t.Errorf("%s #%d: %s", r.Task, r.Rep, r.Reason)
		}
		if r.Attempts > 1 || strings.Contains(r.Reason, "Heartbeat") {
			timeouts++
		}
	}
	t.Logf("1-file fixture: agent %.0f ms per task (3 steps), setup %.0f ms, syncing %.0f ms", mean(smallRuns, agent), mean(smallRuns, setup), mean(smallRuns, sync))
	t.Logf("%d-file fixture: agent %.0f ms per task, setup %.0f ms, syncing %.0f ms (%d runs)", files, mean(bigRuns, agent), mean(bigRuns, setup), mean(bigRuns, sync), len(bigRuns))
	t.Logf("per step: %+.0f ms over the 1-file fixture", (mean(bigRuns, agent)-mean(smallRuns, agent))/3)
	t.Logf("the fleet's own syncing: %+.1f ms per step over the 1-file fixture", (mean(bigRuns, sync)-mean(smallRuns, sync))/3)
	t.Logf("local tiny-go eval (no fleet, no cached checkpoint): agent %.0f ms (1 file), %.0f ms (%d files): %+.0f ms per step",
		localSmall, localBig, files, (localBig-localSmall)/3)
	t.Logf("setup: first %d ms (cold worker), then %.0f ms", first[0].SetupMs, mean(bigRuns, setup))
	t.Logf("blob store: %d KiB per repeated task", grown/int64(len(bigRuns))/1024)
	t.Logf("attempts lost to heartbeat time-outs or retries: %d of %d runs", timeouts, len(bigRuns)+len(first)+len(smallRuns))
}

// TestFleetBigSuite runs a suite of TINY_FLEET_TASKS tasks (default
// 2,000: one quick task repeated) on 3 workers and checks that every
// result streams to `tiny-go eval`, that `eval status` has them all, and
// how long the suite's and its batches' histories grow (Temporal's
// limits: 51,200 events, 50 MB). It only runs with TINY_FLEET_BENCH=1:
//
//	TINY_FLEET_BENCH=1 go test -count=1 -run TestFleetBigSuite -v -timeout 2h ./internal/fleet
func TestFleetBigSuite(t *testing.T) {
	if os.Getenv("TINY_FLEET_BENCH") == "" {
		t.Skip("a measurement; set TINY_FLEET_BENCH=1")
	}
	tasks, _ := strconv.Atoi(os.Getenv("TINY_FLEET_TASKS"))
	if tasks <= 0 {
		tasks = 2000
	}
	c := newCluster(t, needTemporal(t))
	for i := 1; i <= 3; i++ {
		c.startWorker(i, 2)
	}
	suite := quickSuite(t, 1)
	submit := exec.Command(filepath.Join(c.bin, "tiny-go"), "eval", suite, "--repeat", strconv.Itoa(tasks), "--temporal", c.hostPort,
		"--blob", "file://"+c.blobDir, "--endpoint", c.model.URL(), "--json")
	submit.Env = c.env()
	var stdout, stderr bytes.Buffer
	submit.Stdout, submit.Stderr = &stdout, &stderr
	started := time.Now()
	if err := submit.Run(); err != nil {
		t.Fatalf("eval: %v\n%s", err, lastLines(stderr.String(), 20))
	}
	elapsed := time.Since(started)
	streamed := len(regexp.MustCompile(`(?m)^\[\d+/\d+\] PASS`).FindAllString(stderr.String(), -1))
	id := regexp.MustCompile(`tiny-go-eval-[0-9TZ.]+`).FindString(stderr.String())
	status := exec.Command(filepath.Join(c.bin, "tiny-go"), "eval", "status", id, "--temporal", c.hostPort, "--json")
	status.Env = c.env()
	out, err := status.Output()
	if err != nil {
		t.Fatalf("eval status: %v", err)
	}
	passed := strings.Count(string(out), `"passed": true`) + strings.Count(string(out), `"passed":true`)
	if streamed != tasks || passed != tasks {
		t.Errorf("%d results streamed and %d passed in eval status, want %d", streamed, passed, tasks)
	}
	events, size := historyOf(t, c, id)
	b1, s1 := historyOf(t, c, id+"-batch-0001")
	t.Logf("%d tasks in %s = %.0f tasks/min on 3 workers × 2; suite history %d events, %d KiB; a batch's %d events, %d KiB",
		tasks, elapsed.Round(time.Second), float64(tasks)/elapsed.Minutes(), events, size/1024, b1, s1/1024)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// historyOf is the number of events and the bytes of workflow id's
// history.
func historyOf(t *testing.T, c *cluster, id string) (events, size int) {
	cl, err := client.Dial(client.Options{HostPort: c.hostPort})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	it := cl.GetWorkflowHistory(context.Background(), id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		events++
		size += proto.Size(ev)
	}
	return events, size
}
