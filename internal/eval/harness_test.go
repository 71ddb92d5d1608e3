package eval_test

import (
	"bytes"
	"context"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/eval"
	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/sandbox"
	"github.com/tiny-agent/tiny-go/internal/testenv"
)

// taskSpec is a task folder written by a test.
type taskSpec struct {
	prompt, test string
	files        map[string]string // fixture files; nil: no fixture/ at all
	args         string
}

func writeTask(t *testing.T, suite, name string, s taskSpec) eval.Task {
	t.Helper()
	dir := filepath.Join(suite, name)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(dir, 0o755))
	must(os.WriteFile(filepath.Join(dir, "prompt.txt"), []byte(s.prompt+"\n"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "test.sh"), []byte(s.test+"\n"), 0o644))
	if s.args != "" {
		must(os.WriteFile(filepath.Join(dir, "args.txt"), []byte(s.args+"\n"), 0o644))
	}
	if s.files != nil {
		must(os.MkdirAll(filepath.Join(dir, "fixture"), 0o755))
		for name, content := range s.files {
			must(os.MkdirAll(filepath.Dir(filepath.Join(dir, "fixture", name)), 0o755))
			must(os.WriteFile(filepath.Join(dir, "fixture", name), []byte(content), 0o644))
		}
	}
	return eval.Task{Name: name, Dir: dir}
}

// helloTask asks for a file; it needs no toolchain, so it is quick.
func helloTask(t *testing.T, suite, name string) eval.Task {
	return writeTask(t, suite, name, taskSpec{
		prompt: "Create hello.txt containing the line: hello, eval",
		test:   `grep -qx 'hello, eval' hello.txt`,
		files:  map[string]string{"README.md": "A scratch repository.\n"},
	})
}

var helloReplies = []providertest.Reply{
	calls("", usage(1500, 0, 30), call("call_1", "write", map[string]any{"path": "hello.txt", "content": "hello, eval\n"})),
	answer("Created hello.txt with the line \"hello, eval\".", usage(1580, 1500, 14)),
}

func runResult(t *testing.T, rep *eval.Report, name string) eval.RunResult {
	t.Helper()
	for _, task := range rep.Tasks {
		if task.Name == name {
			return task.Runs[0]
		}
	}
	t.Fatalf("no result for %s", name)
	return eval.RunResult{}
}

// TestRecordAgainstLoopbackThenReplay records a task against the
// loopback server (secrets redacted, paths normalized), then replays the
// recording offline with the same results.
func TestRecordAgainstLoopbackThenReplay(t *testing.T) {
	suite := t.TempDir()
	const secret = "sk-or-test-secret-0123456789"
	// The prompt carries the key, as a careless user might paste it: the
	// recording must not.
	tk := writeTask(t, suite, "hello", taskSpec{
		prompt: "Create hello.txt containing the line: hello, eval",
		test:   `grep -qx 'hello, eval' hello.txt`,
		files:  map[string]string{"README.md": "A scratch repository.\n"},
	})
	recorded := t.TempDir()
	// The first send meets an overloaded server; tiny-go waits and sends
	// again, which counts as a retry (and is recorded, so a replay
	// retries as well).
	overloaded := providertest.Reply{Handler: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"error":{"message":"overloaded","code":503}}`))
	}}
	srv := providertest.New(t, append([]providertest.Reply{overloaded}, helloReplies...)...)
	env := childEnviron("TINY_ENDPOINT="+srv.URL(), "TINY_API_KEY="+secret)
	rep, err := eval.Run(context.Background(), eval.Config{Tasks: []eval.Task{tk}, Command: self(t), Env: env, Record: recorded, Model: "test/model"})
	if err != nil {
		t.Fatal(err)
	}
	live := runResult(t, rep, "hello")
	// usage(1500, 0, 30) and usage(1580, 1500, 14): the prices they report.
	wantCost := (1500*1.25 + 30*10 + 80*1.25 + 1500*0.125 + 14*10) / 1e6
	if !live.Passed || live.Requests != 2 || live.ToolCalls["write"] != 1 || live.Tokens.Input == 0 || math.Abs(live.CostUSD-wantCost) > 1e-9 {
		t.Fatalf("recorded run: %+v", live)
	}
	if live.Retries != 1 {
		t.Errorf("retries = %d, want 1", live.Retries)
	}
	if got := srv.Requests(); len(got) != 3 || got[0].Header.Get("Authorization") != "Bearer "+secret {
		t.Fatalf("the loopback server saw %d requests", len(got))
	}
	data, err := os.ReadFile(filepath.Join(recorded, "hello.json"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if strings.Contains(text, secret) {
		t.Error("the recording holds the API key")
	}
	if strings.Contains(text, os.TempDir()+"/tiny-go-eval-") || !strings.Contains(text, "Working directory: @@EVAL_ROOT@@/repo") {
		t.Error("the recording holds the task's temporary directory instead of the placeholder")
	}
	if !strings.Contains(text, `"retryAfter": "1"`) || !strings.Contains(text, `"status": 503`) {
		t.Error("the recording lacks the overloaded reply")
	}
	if !strings.Contains(text, `"endpoint": "http://127.0.0.1/v1"`) || !strings.Contains(text, `"model": "test/model"`) {
		t.Errorf("recording header:\n%.300s", text)
	}

	// Offline: no endpoint, no key; the recorded model is used. Twice,
	// two at a time: a replay is deterministic, so the spread is only time.
	rep, err = eval.Run(context.Background(), eval.Config{Tasks: []eval.Task{tk}, Command: self(t), Env: childEnviron(), Replay: recorded, Repeat: 2, Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	if tr := rep.Tasks[0]; tr.Count != 2 || tr.Passed != 2 || tr.PassRate != 1 || tr.Runs[0].Rep != 1 || tr.Runs[1].Rep != 2 ||
		tr.Tokens.StdDev != 0 || tr.Requests.Mean != 2 || tr.Runs[1].Tokens != tr.Runs[0].Tokens {
		t.Errorf("--repeat 2: %+v", tr)
	}
	replayed := runResult(t, rep, "hello")
	if !replayed.Passed || replayed.Requests != live.Requests || replayed.Tokens != live.Tokens || replayed.ToolCalls["write"] != 1 || replayed.CostUSD != live.CostUSD || replayed.Retries != 1 {
		t.Errorf("replay: %+v\nlive: %+v", replayed, live)
	}
}

// TestFailuresAreReportedAndOthersRun runs a suite in which one task's
// test fails, one agent runs out of time, one task has no fixture, one
// test.sh runs out of time, and one task passes: each is reported with
// its reason, and none stops the others.
func TestFailuresAreReportedAndOthersRun(t *testing.T) {
	suite := t.TempDir()
	files := map[string]string{"README.md": "scratch\n"}
	tasks := []eval.Task{
		writeTask(t, suite, "a-test-fails", taskSpec{prompt: "Say hi.", test: "echo 'expected hello.txt'; exit 3", files: files}),
		writeTask(t, suite, "b-agent-slow", taskSpec{prompt: "Wait a while.", test: "true", files: files}),
		writeTask(t, suite, "c-no-fixture", taskSpec{prompt: "Anything.", test: "true"}),
		writeTask(t, suite, "d-test-hangs", taskSpec{prompt: "Say hi.", test: "sleep 60", files: files}),
		helloTask(t, suite, "e-passes"),
	}
	// Replies in task order (one task at a time); c never asks.
	srv := providertest.New(t,
		answer("hi", usage(900, 0, 2)),
		calls("", usage(900, 0, 12), call("call_1", "bash", map[string]any{"command": "sleep 60"})),
		answer("hi", usage(900, 0, 2)),
		helloReplies[0], helloReplies[1],
	)
	rep, err := eval.Run(context.Background(), eval.Config{
		Tasks: tasks, Command: self(t), Env: childEnviron("TINY_ENDPOINT="+srv.URL(), "OPENROUTER_API_KEY=k"),
		AgentTimeout: 8 * time.Second, TestTimeout: 2 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	rep.WriteTable(&table)
	t.Log("\n" + table.String())
	for name, want := range map[string]struct{ status, reason string }{
		"a-test-fails": {eval.StatusFail, "test.sh exited 3: expected hello.txt"},
		"b-agent-slow": {eval.StatusTimeout, "the agent ran out of time (8s)"},
		"c-no-fixture": {eval.StatusError, "task folder has no fixture/"},
		"d-test-hangs": {eval.StatusTimeout, "test.sh ran out of time (2s)"},
		"e-passes":     {eval.StatusPass, ""},
	} {
		r := runResult(t, rep, name)
		if r.Status != want.status || !strings.Contains(r.Reason, want.reason) {
			t.Errorf("%s: status %s, reason %q; want %s, %q", name, r.Status, r.Reason, want.status, want.reason)
		}
		if r.Reason != "" && !strings.Contains(table.String(), name+": "+r.Reason) {
			t.Errorf("the table does not give the reason of %s", name)
		}
	}
	// The slow agent was stopped through tiny-go's own abort path: its
	// session records the abort.
	if r := runResult(t, rep, "b-agent-slow"); r.Aborts != 1 || r.ToolCalls["bash"] != 1 {
		t.Errorf("timed-out run: %+v", r.Metrics)
	}
	if rep.AllPassed() {
		t.Error("the report says all passed")
	}
	if !strings.Contains(table.String(), "1/5 passed (20%)") {
		t.Errorf("summary:\n%s", table.String())
	}
}

// TestChangedSystemPromptDiverges replays the starter task fix-go-test
// after its fixture gained an AGENTS.md, which changes the system prompt:
// the replay fails at the first request, naming the message and field and
// showing both texts where they part.
func TestChangedSystemPromptDiverges(t *testing.T) {
	suite := t.TempDir()
	src := task(t, "fix-go-test")
	dst := filepath.Join(suite, "fix-go-test")
	if err := os.CopyFS(dst, os.DirFS(src.Dir)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, "fixture", "AGENTS.md"), []byte("Always answer in French.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := eval.Run(context.Background(), eval.Config{
		Tasks: []eval.Task{{Name: "fix-go-test", Dir: dst}}, Command: self(t), Env: childEnviron(), Replay: recordedDir(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	r := runResult(t, rep, "fix-go-test")
	if r.Status != eval.StatusDiverged {
		t.Fatalf("status %s (%s), want diverged", r.Status, r.Reason)
	}
	for _, want := range []string{"replay: request 1 differs from the recording at messages[0] (system).content: first difference at character", `recorded …"`, `now …"`, "<project_context>"} {
		if !strings.Contains(r.Reason, want) {
			t.Errorf("reason lacks %q:\n%s", want, r.Reason)
		}
	}
	if r.TestExit != -1 {
		t.Error("test.sh ran after a divergence")
	}
}

func TestLoadTasks(t *testing.T) {
	suite := t.TempDir()
	helloTask(t, suite, "one")
	helloTask(t, suite, "two")
	os.MkdirAll(filepath.Join(suite, "recorded"), 0o755) // not a task: ignored
	tasks, err := eval.LoadTasks([]string{suite})
	if err != nil || len(tasks) != 2 || tasks[0].Name != "one" || tasks[1].Name != "two" {
		t.Fatalf("%+v %v", tasks, err)
	}
	if tasks, err := eval.LoadTasks([]string{filepath.Join(suite, "two")}); err != nil || len(tasks) != 1 {
		t.Errorf("single task: %+v %v", tasks, err)
	}
	other := t.TempDir()
	helloTask(t, other, "one")
	if _, err := eval.LoadTasks([]string{suite, other}); err == nil || !strings.Contains(err.Error(), "two tasks are named one") {
		t.Errorf("duplicate names: %v", err)
	}
	if _, err := eval.LoadTasks([]string{t.TempDir()}); err == nil || !strings.Contains(err.Error(), "holds no task") {
		t.Errorf("empty folder: %v", err)
	}
	if _, err := eval.LoadTasks([]string{filepath.Join(suite, "nope")}); err == nil {
		t.Error("a missing folder loaded")
	}
}

// TestNodeTestOutputReplays records a task whose agent runs node's test
// runner and jest-style output, whose timings differ on every run, then
// replays it: the durations in the tool result must not make the replay
// diverge.
func TestNodeTestOutputReplays(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed (CI installs it)")
	}
	suite := t.TempDir()
	tk := writeTask(t, suite, "node", taskSpec{
		prompt: "Run the tests.",
		test:   `test -f add.test.js`,
		files: map[string]string{
			"add.test.js": "const test = require('node:test');\nconst assert = require('node:assert');\n" +
				"test('adds', () => { let s = 0; for (let i = 0; i < 1e5 * Math.random(); i++) s += i; assert.ok(s >= 0); });\n",
			"jest.sh": "printf '  \\342\\234\\223 adds (%d ms)\\n' $((RANDOM % 90 + 10))\n",
		},
	})
	replies := []providertest.Reply{
		calls("", usage(100, 0, 10), call("call_1", "bash", map[string]any{"command": "node --test --test-reporter=tap; sh jest.sh"})),
		answer("The tests pass.", usage(200, 100, 5)),
	}
	srv := providertest.New(t, replies...)
	recorded := t.TempDir()
	env := childEnviron("TINY_ENDPOINT="+srv.URL(), "TINY_API_KEY=sk-test")
	rep, err := eval.Run(context.Background(), eval.Config{Tasks: []eval.Task{tk}, Command: self(t), Env: env, Record: recorded, Model: "test/model"})
	if err != nil {
		t.Fatal(err)
	}
	if live := runResult(t, rep, "node"); !live.Passed || live.Requests != 2 {
		t.Fatalf("recorded run: %+v", live)
	}
	if got := srv.Requests(); len(got) != 2 || !strings.Contains(string(got[1].Body), "duration_ms") {
		t.Fatalf("the tool result did not carry node's durations; requests: %d", len(got))
	}
	rep, err = eval.Run(context.Background(), eval.Config{Tasks: []eval.Task{tk}, Command: self(t), Env: childEnviron(), Replay: recorded, Repeat: 2})
	if err != nil {
		t.Fatal(err)
	}
	if tr := rep.Tasks[0]; tr.Passed != 2 {
		t.Errorf("replay of node's test output: %+v", tr.Runs)
	}
}

// test.sh runs what the model left in the repository, so it runs
// contained as the agent's commands do: a write outside the repository
// and the run's folder is refused.
func TestTestScriptIsContained(t *testing.T) {
	if sandbox.ABI() == 0 {
		t.Skip("this kernel has no Landlock")
	}
	outside := testenv.WorkDir(t)
	planted := filepath.Join(outside, "planted")
	suite := t.TempDir()
	task := writeTask(t, suite, "escapes", taskSpec{prompt: "Say hi.", files: map[string]string{"README.md": "scratch\n"},
		test: "echo x > " + planted + " && echo ESCAPED; echo x > \"$EVAL_ROOT/mine\" && echo x > in-repo && echo kept"})
	srv := providertest.New(t, answer("hi", usage(900, 0, 2)))
	rep, err := eval.Run(context.Background(), eval.Config{
		Tasks: []eval.Task{task}, Command: self(t), Env: childEnviron("TINY_ENDPOINT="+srv.URL(), "OPENROUTER_API_KEY=k"),
		AgentTimeout: 8 * time.Second, TestTimeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	r := runResult(t, rep, "escapes")
	if _, err := os.Stat(planted); err == nil {
		t.Fatalf("test.sh wrote outside the repository: %+v", r)
	}
	if r.Status != eval.StatusPass {
		t.Fatalf("test.sh could not write the repository or the run's folder: %s %q", r.Status, r.Reason)
	}
}
