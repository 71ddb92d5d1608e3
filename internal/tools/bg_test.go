package tools

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"

	"github.com/tiny-agent/tiny-go/internal/testenv"
)

var startedRE = regexp.MustCompile(`^Started background process ([0-9a-f]{8}) \(pid (\d+)\)\.\nLog: (.+)$`)

// bgStart starts command and returns its id and pid.
func bgStart(t *testing.T, bg Tool, command string) (string, int) {
	t.Helper()
	res := call(t, bg, map[string]any{"action": "start", "command": command})
	m := startedRE.FindStringSubmatch(res.Content)
	if res.IsError || m == nil {
		t.Fatalf("start: %+v", res)
	}
	pid, _ := strconv.Atoi(m[2])
	return m[1], pid
}

// waitStatus polls bg status until its status line reads want.
func waitStatus(t *testing.T, bg Tool, id, want string) string {
	t.Helper()
	var res Result
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		res = call(t, bg, map[string]any{"action": "status", "id": id})
		if strings.Contains(res.Content, "\nstatus: "+want+"\n") {
			return res.Content
		}
	}
	t.Fatalf("status never became %q: %q", want, res.Content)
	return ""
}

func TestBgLifecycle(t *testing.T) {
	tools, dir := testTools(t)
	bg := tools["bg"]
	id, pid := bgStart(t, bg, "echo ready; exec sleep 30")
	if _, err := os.Stat(filepath.Join(dir, ".tiny-agent", "bg", id+".json")); err != nil {
		t.Fatal(err)
	}
	// It is detached: its own session and group, not ours.
	st, err := readProcStat(pid)
	if err != nil || st.PGRP != pid || st.Session != pid {
		t.Fatalf("stat %+v err %v", st, err)
	}
	waitFileContains(t, filepath.Join(dir, ".tiny-agent", "bg", id+".log"), "ready\n")

	list := call(t, bg, map[string]any{"action": "list"})
	want := regexp.MustCompile(`^` + id + `  running  pid ` + strconv.Itoa(pid) + `  started \S+  echo ready; exec sleep 30$`)
	if !want.MatchString(list.Content) {
		t.Fatalf("list %q", list.Content)
	}
	wantResult(t, call(t, bg, map[string]any{"action": "list", "status": "exited"}), "No background processes with status exited.", false)

	status := waitStatus(t, bg, id, "running")
	if !strings.HasSuffix(status, "\n\nLast 1 log lines:\nready\n") || !strings.Contains(status, "\ncwd: "+dir+"\n") {
		t.Fatalf("status %q", status)
	}
	wantResult(t, call(t, bg, map[string]any{"action": "logs", "id": id}), "ready\n", false)

	wantResult(t, call(t, bg, map[string]any{"action": "stop", "id": id}), fmt.Sprintf("Stopped %s (pid %d) with SIGTERM.", id, pid), false)
	if !processGone(pid) {
		t.Fatal("process survives stop")
	}
	waitStatus(t, bg, id, "stopped")
	wantResult(t, call(t, bg, map[string]any{"action": "stop", "id": id}), "Background process "+id+" is not running: stopped.", false)
	var rec bgRecord
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, ".tiny-agent", "bg", id+".json"))), &rec); err != nil || rec.State != BgStopped || rec.EndedAt == nil {
		t.Fatalf("record %+v err %v", rec, err)
	}
}

func waitFileContains(t *testing.T, path, want string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if data, _ := os.ReadFile(path); strings.Contains(string(data), want) {
			return
		}
	}
	t.Fatalf("%s never contained %q", path, want)
}

func TestBgExitCodeAndLogs(t *testing.T) {
	tools, _ := testTools(t)
	bg := tools["bg"]
	id, _ := bgStart(t, bg, "seq 1 100; exit 4")
	status := waitStatus(t, bg, id, "exited (code 4)")
	if !strings.Contains(status, "\nended: ") || !strings.Contains(status, "Last 40 log lines:\n61\n62\n") {
		t.Fatalf("status %q", status)
	}
	logs := call(t, bg, map[string]any{"action": "logs", "id": id})
	if !strings.HasPrefix(logs.Content, "21\n22\n") || !strings.HasSuffix(logs.Content, "100\n\n\n[Showing the last 80 lines of the log. Full log: "+filepath.Join(filepath.Dir(logsPath(t, bg, id)), id+".log")+"]") {
		t.Fatalf("logs %q", logs.Content)
	}
	logs = call(t, bg, map[string]any{"action": "logs", "id": id, "tail": 2})
	if !strings.HasPrefix(logs.Content, "99\n100\n\n\n[Showing the last 2 lines") {
		t.Fatalf("logs tail=2 %q", logs.Content)
	}
	logs = call(t, bg, map[string]any{"action": "logs", "id": id, "tail": 5000})
	if logs.Content != strings.Join(strings.Fields(seq(1, 100)), "\n")+"\n" {
		t.Fatalf("logs tail=5000 %q", logs.Content)
	}
	wantResult(t, call(t, bg, map[string]any{"action": "stop", "id": id}), "Background process "+id+" is not running: exited (code 4).", false)
	list := call(t, bg, map[string]any{"action": "list", "status": "exited"})
	if !strings.HasPrefix(list.Content, id+"  exited (code 4)  ") {
		t.Fatalf("list %q", list.Content)
	}
}

func seq(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

func logsPath(t *testing.T, bg Tool, id string) string {
	t.Helper()
	status := call(t, bg, map[string]any{"action": "status", "id": id}).Content
	_, rest, _ := strings.Cut(status, "\nlog: ")
	path, _, _ := strings.Cut(rest, "\n")
	return path
}

func TestBgStopEscalatesToKill(t *testing.T) {
	tools, dir := testTools(t)
	bg := tools["bg"]
	id, pid := bgStart(t, bg, "trap '' TERM; echo trapped; sleep 30 & echo $! > child; wait")
	waitFileContains(t, filepath.Join(dir, ".tiny-agent", "bg", id+".log"), "trapped\n")
	child := pidIn(t, filepath.Join(dir, "child"))
	start := time.Now()
	wantResult(t, call(t, bg, map[string]any{"action": "stop", "id": id}),
		fmt.Sprintf("Stopped %s (pid %d) with SIGKILL after 2 seconds.", id, pid), false)
	if d := time.Since(start); d < 2*time.Second || d > 2*time.Second+testenv.Scale(2*time.Second) {
		t.Fatalf("stop took %v", d)
	}
	if !processGone(pid) || !processGone(child) {
		t.Fatal("processes survive stop")
	}
}

// sleeper starts a process outside the bg machinery, in its own group.
func sleeper(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd
}

func TestBgStalePidIsNeverSignalled(t *testing.T) {
	tools, dir := testTools(t)
	bg := tools["bg"]
	victim := sleeper(t)
	st, err := readProcStat(victim.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	bgDir := filepath.Join(dir, ".tiny-agent", "bg")
	os.MkdirAll(bgDir, 0o755)
	// A record whose pid was recycled: same pid, another start time.
	for id, rec := range map[string]bgRecord{
		"recycled": {PID: victim.Process.Pid, StartTicks: st.StartTicks + 1},
		"gone":     {PID: 1 << 30},
	} {
		rec.ID, rec.Command, rec.State = id, "old server", BgRunning
		rec.Log = filepath.Join(bgDir, id+".log")
		data, _ := json.Marshal(rec)
		writeFile(t, filepath.Join(bgDir, id+".json"), string(data))
	}
	writeFile(t, filepath.Join(bgDir, "broken.json"), "{not json")

	list := call(t, bg, map[string]any{"action": "list", "status": "stale"})
	if !strings.Contains(list.Content, "recycled  stale  pid "+strconv.Itoa(victim.Process.Pid)) ||
		!strings.Contains(list.Content, "gone  stale  pid ") || !strings.Contains(list.Content, "(1 unreadable record(s)") {
		t.Fatalf("list %q", list.Content)
	}
	wantResult(t, call(t, bg, map[string]any{"action": "stop", "id": "recycled"}),
		fmt.Sprintf("Background process recycled is not running: stale (pid %d no longer belongs to it); nothing was signalled.", victim.Process.Pid), false)
	time.Sleep(50 * time.Millisecond)
	if processGone(victim.Process.Pid) {
		t.Fatal("a recycled pid was signalled")
	}
	status := call(t, bg, map[string]any{"action": "status", "id": "recycled"})
	if !strings.Contains(status.Content, "\nstatus: stale\n") || !strings.HasSuffix(status.Content, "(log unreadable: open "+filepath.Join(bgDir, "recycled.log")+": no such file or directory)") {
		t.Fatalf("status %q", status.Content)
	}
}

func TestBgProcessOfAnotherRun(t *testing.T) {
	tools, dir := testTools(t)
	id, pid := bgStart(t, tools["bg"], "exec sleep 30")
	// A second Manager is what the next tiny-go run would have.
	other, err := NewManager(dir)
	if err != nil {
		t.Fatal(err)
	}
	bg2 := bgTool{m: other}
	waitStatus(t, bg2, id, "running")
	wantResult(t, call(t, bg2, map[string]any{"action": "stop", "id": id}), fmt.Sprintf("Stopped %s (pid %d) with SIGTERM.", id, pid), false)
	if !processGone(pid) {
		t.Fatal("process survives")
	}
	// StopAll of the second run does not touch what it did not start.
	if err := other.StopAll(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestBgStopAll(t *testing.T) {
	tools, dir := testTools(t)
	bg := tools["bg"]
	m := bg.(bgTool).m
	_, a := bgStart(t, bg, "exec sleep 30")
	_, b := bgStart(t, bg, "trap '' TERM; sleep 30 & wait")
	// The shell exits at once but leaves a job in its group.
	left, _ := bgStart(t, bg, "sleep 30 & echo $! > leftover")
	leftover := pidIn(t, filepath.Join(dir, "leftover"))
	status := waitStatus(t, bg, left, "exited (code 0)")
	if !strings.Contains(status, "\nnote: processes it put in the background are still running") {
		t.Fatalf("status %q", status)
	}
	// A process of someone else is never touched.
	victim := sleeper(t)

	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	m.StopAll(ctx)
	if d := time.Since(start); d > testenv.Scale(1500*time.Millisecond) {
		t.Fatalf("StopAll took %v despite a 500ms context", d)
	}
	for _, pid := range []int{a, b, leftover} {
		if !processGone(pid) {
			t.Fatalf("pid %d survives StopAll", pid)
		}
	}
	if processGone(victim.Process.Pid) {
		t.Fatal("StopAll killed an unrelated process")
	}
	list := call(t, bg, map[string]any{"action": "list", "status": "running"})
	wantResult(t, list, "No background processes with status running.", false)
}

func TestBgValidation(t *testing.T) {
	tools, _ := testTools(t)
	bg := tools["bg"]
	for _, tc := range []struct{ args, want string }{
		{`{}`, "action must be a nonempty string"},
		{`{"action":"restart"}`, "action must be one of start, list, status, logs, stop"},
		{`{"action":"start"}`, "command must be a nonempty string"},
		{`{"action":"status"}`, "id must be a nonempty string"},
		{`{"action":"logs","id":"x","tail":0}`, "tail must be an integer >= 1"},
		{`{"action":"list","status":"zombie"}`, "status must be one of running, exited, stopped, stale"},
		{`{"action":"stop","id":"nope"}`, "No background process with id nope."},
		{`{"action":"logs","id":"../../etc/passwd"}`, "No background process with id ../../etc/passwd."},
	} {
		wantResult(t, callRaw(t, bg, tc.args), tc.want, true)
	}
	wantResult(t, callRaw(t, bg, `{"action":"list"}`), "No background processes.", false)
}

func TestParseProcStat(t *testing.T) {
	// The command name may contain spaces and parentheses.
	line := "4242 (a b) (c)) S 1 4242 4242 0 -1 4194560 101 0 0 0 0 0 0 0 20 0 1 0 987654 1000 100 18446744073709551615"
	st, err := parseProcStat([]byte(line))
	if err != nil || st.State != 'S' || st.PGRP != 4242 || st.Session != 4242 || st.StartTicks != 987654 {
		t.Fatalf("got %+v %v", st, err)
	}
	if _, err := parseProcStat([]byte("12 (x) S 1 2")); err == nil {
		t.Fatal("short stat accepted")
	}
}
