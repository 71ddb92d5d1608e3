package fleet_test

import (
	"bytes"
	"encoding/json"
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
// tasks are mid-command, one in its first step (only its session was
// shipped), one in its second (a change set too); both come back on
// another worker, each with its command interrupted once, and pass. Once
// on a worker of the same machine, once on one with a key of its own (as
// on another machine). Before the fix tiny-go refused the restored
// sessions: on this machine the first task's (its integrity records were
// not in the store, and tiny-go had marked beside its key that it sealed
// some: UNSEALED), on another the second task's (the records that came
// with its change set were sealed with the dead worker's key).
func TestTwoTasksOfAKilledWorkerComeBack(t *testing.T) {
	temporal := needTemporal(t)
	c := newCluster(t, temporal)
	c.startWorker(1, 2)
	c.killMidCommands(1, func() { c.startWorker(2, 2) })
	c.stopWorker(1)
	c.startWorker(3, 2)
	c.killMidCommands(3, func() {
		t.Setenv("XDG_STATE_HOME", t.TempDir()) // the key of another machine
		c.startWorker(4, 2)
	})
}

// markerFiles are where a running command's markers.txt may be: in the
// workspace itself (commands journaled on it, the default), or in the
// upper layer of its overlay beside it (TINY_TX=overlay).
func markerFiles(c *cluster, task string) []string {
	journaled, _ := filepath.Glob(filepath.Join(c.workDir, "*", task+"-1", "repo", "markers.txt"))
	upper, _ := filepath.Glob(filepath.Join(c.workDir, "*", task+"-1", ".tx", "*", "upper", "markers.txt"))
	return append(journaled, upper...)
}

// killMidCommands runs tasks first and first+1 (slow in steps 1 and 2) on
// the last worker started, SIGKILLs it (and its tiny-go and bash) once
// both are mid-command, calls then, and checks both tasks pass with one
// interrupted command each.
func (c *cluster) killMidCommands(first int, then func()) {
	t := c.t
	suite := writeSuite(t, t.TempDir(), first+1, first+1)
	for i := 1; i < first; i++ {
		if err := os.RemoveAll(filepath.Join(suite, fmt.Sprintf("task%02d", i))); err != nil {
			t.Fatal(err)
		}
	}
	a, b := fmt.Sprintf("task%02d", first), fmt.Sprintf("task%02d", first+1)
	slowFirstStep(t, filepath.Join(suite, a))
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
	for !midCommand(c, a, 1) || !midCommand(c, b, 2) {
		if time.Now().After(deadline) {
			t.Fatalf("%s and %s were never both mid-command: %s", a, b, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second) // their toolStarted is in the store by now
	for _, p := range descendants(c.workers[len(c.workers)-1].Process.Pid) {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	then()
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("eval: %v\n%s", err, out.String())
		}
	case <-time.After(4 * time.Minute):
		t.Fatalf("the suite did not finish: %s", out.String())
	}
	for _, task := range []string{a, b} {
		sessions, _ := filepath.Glob(filepath.Join(c.blobDir, "runs", "*", task+"-1", "2*.jsonl"))
		if len(sessions) != 1 {
			t.Fatalf("%s: %d final sessions\n%s", task, len(sessions), out.String())
		}
		data, _ := os.ReadFile(sessions[0])
		st, corrupt := session.Reduce(data)
		if corrupt != nil || st.LastFinished.Outcome != session.OutcomeCompleted {
			t.Errorf("%s: session ends %q (%v)", task, st.LastFinished.Outcome, corrupt)
		}
		// One per attempt that died mid-command: the kill, and maybe an
		// attempt whose heartbeat was late on a busy machine.
		var workers []string
		w, _ := os.ReadFile(filepath.Join(filepath.Dir(sessions[0]), "workers.json"))
		_ = json.Unmarshal(w, &workers)
		if n := strings.Count(string(data), `"reason":"interrupted"`); n < 1 || n > len(workers)-1 {
			t.Errorf("%s: %d interrupted commands in %d attempts, want the killed one", task, n, len(workers))
		}
	}
}

// stopWorker stops worker i (from 0) as a supervisor would (SIGTERM).
func (c *cluster) stopWorker(i int) {
	w := c.workers[i]
	_ = w.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = w.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = w.Process.Kill()
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
	for _, m := range markerFiles(c, task) {
		if data, _ := os.ReadFile(m); strings.Contains(string(data), fmt.Sprintf("step %d call", step)) {
			return true
		}
	}
	return false
}
