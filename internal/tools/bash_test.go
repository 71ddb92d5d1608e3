package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/uuid"

	"github.com/tiny-agent/tiny-go/internal/testenv"
)

func bashIn(t *testing.T) (Tool, string) {
	t.Helper()
	tools, dir := testTools(t)
	return tools["bash"], dir
}

func TestBashOutputAndExitCode(t *testing.T) {
	bash, dir := bashIn(t)
	wantResult(t, call(t, bash, map[string]any{"command": "echo hi"}), "hi\n", false)
	wantResult(t, call(t, bash, map[string]any{"command": "pwd"}), dir+"\n", false)
	wantResult(t, call(t, bash, map[string]any{"command": "echo out; exit 3"}), "out\n\n\nCommand exited with code 3", true)
	// stderr is captured too; the two pipes interleave in arrival order.
	got := call(t, bash, map[string]any{"command": "echo out; echo err >&2"})
	if got.IsError || len(got.Content) != 8 || !strings.Contains(got.Content, "out\n") || !strings.Contains(got.Content, "err\n") {
		t.Fatalf("got %+v", got)
	}
	wantResult(t, call(t, bash, map[string]any{"command": "true"}), "(no output)", false)
	wantResult(t, call(t, bash, map[string]any{"command": "exit 2"}), "(no output)\n\nCommand exited with code 2", true)
	wantResult(t, call(t, bash, map[string]any{"command": "kill -TERM $$"}), "(no output)\n\nCommand exited with code 143", true)
	// Invalid UTF-8 never reaches the model.
	wantResult(t, call(t, bash, map[string]any{"command": `printf 'caf\351'`}), "caf\uFFFD", false)
}

func TestBashValidation(t *testing.T) {
	bash, _ := bashIn(t)
	for _, tc := range []struct{ args, want string }{
		{`{}`, "command must be a nonempty string"},
		{`{"command":""}`, "command must be a nonempty string"},
		{`{"command":"true","timeout":0}`, "timeout must be a positive number of seconds"},
		{`{"command":"true","timeout":-1}`, "timeout must be a positive number of seconds"},
		{`{"command":"true","timeout":"5"}`, "timeout must be a positive number of seconds"},
	} {
		wantResult(t, callRaw(t, bash, tc.args), tc.want, true)
	}
	wantResult(t, callRaw(t, bash, `{"command":"echo ok","timeout":1e300}`), "ok\n", false)
}

func TestBashTimeout(t *testing.T) {
	bash, _ := bashIn(t)
	start := time.Now()
	got := call(t, bash, map[string]any{"command": "echo started; sleep 30", "timeout": 0.3})
	wantResult(t, got, "started\n\n\nCommand timed out after 0.3 seconds.", true)
	if d := time.Since(start); d > testenv.Scale(1500*time.Millisecond) {
		t.Fatalf("timeout took %v", d)
	}
}

func TestBashWaitsForBackgroundJobsOfTheCommand(t *testing.T) {
	bash, _ := bashIn(t)
	// Like a shell, the tool waits while the command's own group holds
	// the output open.
	got := call(t, bash, map[string]any{"command": "(sleep 0.3; echo late) & echo early"})
	wantResult(t, got, "early\nlate\n", false)
}

var logNotice = regexp.MustCompile(`\n\n\[Showing lines (\d+)-(\d+) of (\d+)\. (Full output|Captured output; command exceeded the 10MB safety cap): (.+)\]$`)

// splitNotice separates the tail from the truncation notice and checks the
// log file is named by a UUIDv7 under .tiny-agent/tool-output.
func splitNotice(t *testing.T, dir, content string) (tail string, first, last, total int, label, log string) {
	t.Helper()
	m := logNotice.FindStringSubmatchIndex(content)
	if m == nil {
		t.Fatalf("no truncation notice in %q", content[max(0, len(content)-200):])
	}
	sub := func(i int) string { return content[m[2*i]:m[2*i+1]] }
	first, _ = strconv.Atoi(sub(1))
	last, _ = strconv.Atoi(sub(2))
	total, _ = strconv.Atoi(sub(3))
	label, log = sub(4), sub(5)
	if filepath.Dir(log) != filepath.Join(dir, ".tiny-agent", "tool-output") || filepath.Ext(log) != ".log" {
		t.Fatalf("log path %q", log)
	}
	id, err := uuid.Parse(strings.TrimSuffix(filepath.Base(log), ".log"))
	if err != nil || id.Version() != 7 {
		t.Fatalf("log name %q is not a UUIDv7 (%v)", filepath.Base(log), err)
	}
	return content[:m[0]], first, last, total, label, log
}

func TestBashLargeOutputKeepsTailAndSavesLog(t *testing.T) {
	bash, dir := bashIn(t)
	got := call(t, bash, map[string]any{"command": "seq 1 3000"})
	tail, first, last, total, label, log := splitNotice(t, dir, got.Content)
	if got.IsError || first != 1001 || last != 3000 || total != 3000 || label != "Full output" {
		t.Fatalf("notice %d-%d of %d %q", first, last, total, label)
	}
	var want strings.Builder
	for i := 1001; i <= 3000; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	if tail != want.String() {
		t.Fatalf("tail starts %q", tail[:20])
	}
	full := readFile(t, log)
	if !strings.HasPrefix(full, "1\n2\n3\n") || !strings.HasSuffix(full, want.String()) || strings.Count(full, "\n") != 3000 {
		t.Fatalf("log has %d lines", strings.Count(full, "\n"))
	}
}

func TestBashLongLineCutAtUTF8Boundary(t *testing.T) {
	bash, dir := bashIn(t)
	// 40,000 two-byte runes on one line: 80,000 bytes, no newline.
	got := call(t, bash, map[string]any{"command": `i=0; s=éééééééééé; while [ $i -lt 4000 ]; do printf %s $s; i=$((i+1)); done`})
	tail, first, last, total, _, log := splitNotice(t, dir, got.Content)
	if first != 1 || last != 1 || total != 1 {
		t.Fatalf("notice %d-%d of %d", first, last, total)
	}
	if len(tail) > MaxOutputBytes || len(tail) < MaxOutputBytes-1 || strings.Trim(tail, "é") != "" {
		t.Fatalf("tail of %d bytes, not a clean run of é", len(tail))
	}
	if fi, _ := os.Stat(log); fi.Size() != 80_000 {
		t.Fatalf("log size %d", fi.Size())
	}
}

func TestBashOutputCap(t *testing.T) {
	bash, dir := bashIn(t)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	got := call(t, bash, map[string]any{"command": "yes 0123456789abcdefghijklmnopqrstuvwxyz"})
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	const suffix = "\n\nBash output exceeded the 10MB safety cap; complete output was not captured."
	if !got.IsError || !strings.HasSuffix(got.Content, suffix) {
		t.Fatalf("got %q", got.Content[max(0, len(got.Content)-300):])
	}
	_, first, last, total, label, log := splitNotice(t, dir, strings.TrimSuffix(got.Content, suffix))
	const lineLen = 37
	if label != "Captured output; command exceeded the 10MB safety cap" || total != (bashStreamCap+lineLen-1)/lineLen || last != total {
		t.Fatalf("notice %d-%d of %d %q", first, last, total, label)
	}
	if fi, err := os.Stat(log); err != nil || fi.Size() != bashStreamCap {
		t.Fatalf("log: %v %v", fi.Size(), err)
	}
	// The race detector allocates on its own; the bound is for real builds.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 && !testenv.Race {
		t.Fatalf("capturing 10MB allocated %d bytes", alloc)
	}
	t.Logf("capped after %v", elapsed)
}

// waitFile waits for a command under test to write path, returning its text.
func waitFile(t *testing.T, path string) string {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if data, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(data), "\n") {
			return strings.TrimSpace(string(data))
		}
	}
	t.Fatalf("%s never written", path)
	return ""
}

func pidIn(t *testing.T, path string) int {
	t.Helper()
	pid, err := strconv.Atoi(waitFile(t, path))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// processGone reports whether pid no longer runs (zombies count as gone:
// this container's init does not reap them).
func processGone(pid int) bool {
	st, err := readProcStat(pid)
	return err != nil || st.Dead()
}

// runCancelled starts command, cancels it once ready exists, and returns
// how long Run took after the cancel.
func runCancelled(t *testing.T, bash Tool, command, ready string) (Result, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result, 1)
	go func() {
		done <- bash.Run(ctx, jsontext.Value(`{"command":`+strconv.Quote(command)+`}`))
	}()
	waitFile(t, ready)
	time.Sleep(50 * time.Millisecond) // let the command reach its wait
	cancel()
	start := time.Now()
	select {
	case res := <-done:
		return res, time.Since(start)
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
		return Result{}, 0
	}
}

func TestBashAbortKillsGroup(t *testing.T) {
	for _, tc := range []struct{ name, command string }{
		{"background job and wait", `sleep 30 & echo $! > child; echo $$ > group; wait`},
		{"pipeline", `echo $$ > group; sleep 30 | sleep 31 & echo $! > child; wait`},
		{"ignores SIGTERM", `trap '' TERM; sleep 30 & echo $! > child; echo $$ > group; wait; wait`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bash, dir := bashIn(t)
			res, took := runCancelled(t, bash, tc.command, filepath.Join(dir, "group"))
			if took > testenv.Scale(time.Second) {
				t.Fatalf("Run returned %v after cancel", took)
			}
			if !res.IsError || !strings.HasSuffix(res.Content, "Command aborted.") {
				t.Fatalf("result %+v", res)
			}
			pgid := pidIn(t, filepath.Join(dir, "group"))
			child := pidIn(t, filepath.Join(dir, "child"))
			if !processGone(child) || !processGone(pgid) {
				t.Fatalf("processes survive: shell %v child %v", !processGone(pgid), !processGone(child))
			}
			if groupAlive(pgid) {
				t.Fatalf("group %d still has live members", pgid)
			}
		})
	}
}

func TestBashEscapedGrandchildDoesNotHang(t *testing.T) {
	bash, dir := bashIn(t)
	start := time.Now()
	// setsid leaves the group; the escaped sleep keeps stdout open.
	got := call(t, bash, map[string]any{"command": "setsid sleep 30 & echo $! > escaped; echo done"})
	took := time.Since(start)
	pid := pidIn(t, filepath.Join(dir, "escaped"))
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	wantResult(t, got, "done\n", false)
	if took > testenv.Scale(time.Second) {
		t.Fatalf("Run took %v", took)
	}
	if processGone(pid) {
		t.Fatal("the escaped process should have been left alone")
	}

	// Also when the group must be killed (timeout) first.
	start = time.Now()
	got = call(t, bash, map[string]any{"command": "setsid sleep 30 & echo $! > escaped2; sleep 30", "timeout": 0.2})
	took = time.Since(start)
	pid2 := pidIn(t, filepath.Join(dir, "escaped2"))
	t.Cleanup(func() { syscall.Kill(pid2, syscall.SIGKILL) })
	wantResult(t, got, "(no output)\n\nCommand timed out after 0.2 seconds.", true)
	if took > testenv.Scale(1200*time.Millisecond) {
		t.Fatalf("Run took %v", took)
	}
}

func TestBashNotStartedWhenAlreadyCancelled(t *testing.T) {
	bash, dir := bashIn(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := bash.Run(ctx, jsontext.Value(`{"command":"touch ran"}`))
	if !res.IsError {
		t.Fatalf("result %+v", res)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Fatal("command ran despite cancelled context")
	}
}

// BenchmarkBashCapture10MB measures capturing 10,000,000 bytes of output
// (just under the cap, so the command runs to completion).
func BenchmarkBashCapture10MB(b *testing.B) {
	tools, _ := testTools(b)
	bash := tools["bash"]
	args := jsontext.Value(`{"command":"yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c 10000000"}`)
	b.SetBytes(bashStreamCap)
	b.ReportAllocs()
	var peak uint64 // the largest heap growth during one Run
	for b.Loop() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		base := ms.HeapInuse
		stop := make(chan struct{})
		sampled := make(chan uint64)
		go func() { sampled <- sampleHeap(stop) }()
		res := bash.Run(context.Background(), args)
		close(stop)
		if p := <-sampled; p > base {
			peak = max(peak, p-base)
		}
		if res.IsError || !strings.Contains(res.Content, "Full output:") {
			b.Fatalf("result %q", res.Content[max(0, len(res.Content)-200):])
		}
	}
	b.ReportMetric(float64(peak)/(1<<10), "peak-heap-growth-KiB")
}

// sampleHeap returns the largest HeapInuse seen until stop is closed.
func sampleHeap(stop <-chan struct{}) uint64 {
	var peak uint64
	var ms runtime.MemStats
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
		select {
		case <-stop:
			return peak
		case <-tick.C:
		}
	}
}

func TestBashUsesTheGivenEnvironment(t *testing.T) {
	dir := t.TempDir()
	ts, err := Builtins(Config{WorkDir: dir, Plugins: []string{PluginBash}, Env: []string{"PATH=" + os.Getenv("PATH"), "ONLY_THIS=yes"}})
	if err != nil {
		t.Fatal(err)
	}
	got := call(t, ts[0], map[string]any{"command": "echo ${ONLY_THIS:-unset} ${HOME:-nohome}"})
	if got.IsError || got.Content != "yes nohome\n" {
		t.Fatalf("got %q", got.Content)
	}
}
