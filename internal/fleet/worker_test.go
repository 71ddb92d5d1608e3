package fleet_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// `tiny-go worker` becomes tiny-go-fleet in place: a supervisor's SIGKILL
// or SIGTERM of that pid leaves no tiny-go-fleet behind (within 2 s and
// 10 s), and a job it runs gets the model key tiny-go took out of its own
// environment.
func TestWorkerIsOneProcess(t *testing.T) {
	temporal := needTemporal(t)
	c := newCluster(t, temporal)
	fleetBin := filepath.Join(c.bin, "tiny-go-fleet")
	for i, tc := range []struct {
		sig   syscall.Signal
		limit time.Duration
	}{{syscall.SIGKILL, 2 * time.Second}, {syscall.SIGTERM, 10 * time.Second}} {
		c.startWorker(10+i, 1)
		w := c.workers[len(c.workers)-1]
		waitUntil(t, 10*time.Second, "the worker's pid to run tiny-go-fleet", func() bool {
			exe, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(w.Process.Pid), "exe"))
			return exe == fleetBin
		})
		if tc.sig == syscall.SIGTERM {
			// A job first, so the worker is known to be polling: its model
			// request carries the key the worker's tiny-go concealed.
			runJob(t, c)
			reqs := c.model.Requests()
			if len(reqs) == 0 || reqs[len(reqs)-1].Header.Get("Authorization") != "Bearer fleet-test-key" {
				t.Errorf("the job's model request lacks the workers' key")
			}
		}
		if err := w.Process.Signal(tc.sig); err != nil {
			t.Fatal(err)
		}
		waitUntil(t, tc.limit, "no tiny-go-fleet left after "+tc.sig.String(), func() bool {
			return len(processesOf(fleetBin)) == 0
		})
	}
}

func runJob(t *testing.T, c *cluster) {
	t.Helper()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "README"), []byte("job\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := exec.Command(filepath.Join(c.bin, "tiny-go"), "run", "--temporal", c.hostPort, "--blob", "file://"+c.blobDir,
		"--endpoint", c.model.URL(), "--dir", ws, "This is fleet task 97: run the three steps.")
	run.Env = c.env()
	var runErr bytes.Buffer
	run.Stderr = &runErr
	if err := run.Run(); err != nil {
		t.Fatalf("tiny-go run --temporal: %v\n%s", err, runErr.String())
	}
}

// processesOf lists the pids whose executable is exe (zombies, which have
// none, are not counted: they are gone).
func processesOf(exe string) []string {
	entries, _ := os.ReadDir("/proc")
	var pids []string
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		if p, _ := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); strings.TrimSuffix(p, " (deleted)") == exe {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

func waitUntil(t *testing.T, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", limit, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
