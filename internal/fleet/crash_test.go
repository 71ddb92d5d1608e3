package fleet_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// TestTwoTasksOfAKilledWorkerComeBack kills a worker while both of its
// tasks are mid-command: task01 in its first step (nothing of its
// workspace shipped yet, only its session), task02 in its second. Both
// come back on another worker, each with its command interrupted once,
// and pass. Before the fix, task01's retry was refused by tiny-go (its
// session came back without the integrity records tiny-go had sealed and
// marked on this machine: UNSEALED), and its test failed with no step.
func TestTwoTasksOfAKilledWorkerComeBack(t *testing.T) {
	temporal := needTemporal(t)
	c := newCluster(t, temporal)
	suite := writeSuite(t, t.TempDir(), 2, 2)
	slowFirstStep(t, filepath.Join(suite, "task01"))
	c.startWorker(1, 2)
	submit := exec.Command(filepath.Join(c.bin, "tiny-go"), "eval", suite, "--temporal", c.hostPort, "--blob", "file://"+c.blobDir,
		"--endpoint", c.model.URL(), "--heartbeat-timeout", "5s", "--timeout", "2m")
	submit.Env = c.env()
	var out bytes.Buffer
	submit.Stdout, submit.Stderr = &out, &out
	if err := submit.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- submit.Wait() }()

	deadline := time.Now().Add(2 * time.Minute)
	for !midCommand(c, "task01", 1) || !midCommand(c, "task02", 2) {
		if time.Now().After(deadline) {
			t.Fatalf("the two tasks were never both mid-command: %s", out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second) // their toolStarted is in the store by now
	for _, p := range descendants(c.workers[0].Process.Pid) {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	c.startWorker(2, 2)
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("eval: %v\n%s", err, out.String())
		}
	case <-time.After(4 * time.Minute):
		t.Fatalf("the suite did not finish: %s", out.String())
	}
	if !strings.Contains(out.String(), "2/2 passed") {
		t.Fatalf("eval:\n%s", out.String())
	}
	for _, task := range []string{"task01", "task02"} {
		sessions, _ := filepath.Glob(filepath.Join(c.blobDir, "runs", "*", task+"-1", "2*.jsonl"))
		if len(sessions) != 1 {
			t.Fatalf("%s: %d final sessions", task, len(sessions))
		}
		data, _ := os.ReadFile(sessions[0])
		st, corrupt := session.Reduce(data)
		if corrupt != nil || st.LastFinished.Outcome != session.OutcomeCompleted {
			t.Errorf("%s: session ends %q (%v)", task, st.LastFinished.Outcome, corrupt)
		}
		if n := strings.Count(string(data), `"reason":"interrupted"`); n != 1 {
			t.Errorf("%s: %d interrupted commands, want 1 (the killed one)", task, n)
		}
	}
}

// slowFirstStep makes the eval task in dir sleep in its first step.
func slowFirstStep(t *testing.T, dir string) {
	p := filepath.Join(dir, "prompt.txt")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.TrimSpace(string(b))+" (slow step 1)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// midCommand says whether task's command of step is running: what it
// wrote is in its transaction's upper layer (beside the workspace) until
// it ends.
func midCommand(c *cluster, task string, step int) bool {
	matches, _ := filepath.Glob(filepath.Join(c.workDir, "*", task+"-1", ".tx", "*", "upper", "markers.txt"))
	for _, m := range matches {
		if data, _ := os.ReadFile(m); strings.Contains(string(data), fmt.Sprintf("step %d call", step)) {
			return true
		}
	}
	return false
}
