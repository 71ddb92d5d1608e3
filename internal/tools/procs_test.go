package tools

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/procs"
)

// trackedTools builds every built-in with a process tracker.
func trackedTools(t *testing.T) (map[string]Tool, *procs.Tracker) {
	t.Helper()
	dir := t.TempDir()
	tr, err := procs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewManager(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		m.StopAll(context.Background())
		tr.Close()
	})
	list, err := Builtins(Config{WorkDir: dir, Background: m, Procs: tr})
	if err != nil {
		t.Fatal(err)
	}
	byName := make(map[string]Tool)
	for _, tool := range list {
		byName[tool.Definition().Name] = tool
	}
	return byName, tr
}

// sleepAlive reports whether a live process runs `sleep <secs>`.
func sleepAlive(secs string) bool {
	want := []byte("sleep\x00" + secs + "\x00")
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && bytes.Equal(b, want) {
			if st, err := readProcStat(pid); err == nil && !st.Dead() {
				return true
			}
		}
	}
	return false
}

func sleepGone(secs string) bool {
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if !sleepAlive(secs) {
			return true
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// A command killed for its timeout, or a bg process stopped, takes what
// it started outside its process group with it.
func TestKilledCommandsTakeTheirEscapees(t *testing.T) {
	tools, tr := trackedTools(t)
	secs := strconv.Itoa(300000 + rand.IntN(600000))
	res := call(t, tools["bash"], map[string]any{"command": "setsid sleep " + secs + " >/dev/null 2>&1 & sleep 30", "timeout": 0.5})
	if !strings.Contains(res.Content, "timed out") {
		t.Fatalf("bash: %+v", res)
	}
	if !sleepGone(secs) {
		t.Fatal("a setsid grandchild survived the timeout of its command")
	}

	bgSecs := secs + "1"
	res = call(t, tools["bg"], map[string]any{"action": "start", "command": "nohup setsid sleep " + bgSecs + " >/dev/null 2>&1 & sleep 30"})
	if res.IsError {
		t.Fatalf("bg start: %+v", res)
	}
	id := strings.Fields(res.Content)[3]
	deadline := time.Now().Add(5 * time.Second)
	for !sleepAlive(bgSecs) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if res := call(t, tools["bg"], map[string]any{"action": "stop", "id": id}); res.IsError {
		t.Fatalf("bg stop: %+v", res)
	}
	if !sleepGone(bgSecs) {
		t.Fatal("a setsid grandchild survived bg stop")
	}

	// A command that ends normally leaves its escapee running (as a shell
	// would) until tiny-go exits.
	left := secs + "2"
	if res := call(t, tools["bash"], map[string]any{"command": "setsid sleep " + left + " >/dev/null 2>&1 &"}); res.IsError {
		t.Fatalf("bash: %+v", res)
	}
	deadline = time.Now().Add(5 * time.Second)
	for !sleepAlive(left) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	if !sleepAlive(left) {
		t.Fatal("the escapee of a finished command was killed early")
	}
	tr.Close()
	if !sleepGone(left) {
		t.Error("the run's Close left an escapee running")
	}
}
