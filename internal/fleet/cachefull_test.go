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
)

// A worker whose memory cache is too small for a task's base (a 64 KB
// tmpfs, a 300 KB fixture) builds the base on disk, says so once, and
// the task runs and passes; a second task over the same fixture finds
// the base there.
func TestFullMemoryCacheTaskRuns(t *testing.T) {
	c := newCluster(t, needTemporal(t))
	suite := writeSuite(t, t.TempDir(), 1, 0)
	fixture := filepath.Join(suite, "task01", "fixture")
	for i := range 300 {
		body := bytes.Repeat([]byte(fmt.Sprintf("%04d", i)), 256)
		if err := os.WriteFile(filepath.Join(fixture, fmt.Sprintf("f%03d.txt", i)), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c.startWorker(1, 1, "--cache-memory", "64k")
	submit := exec.Command(filepath.Join(c.bin, "tiny-go"), "eval", suite, "--repeat", "2", "--temporal", c.hostPort,
		"--blob", "file://"+c.blobDir, "--endpoint", c.model.URL())
	submit.Env = c.env()
	var stderr bytes.Buffer
	submit.Stdout, submit.Stderr = &stderr, &stderr
	if err := submit.Run(); err != nil {
		t.Fatalf("eval: %v\n%s", err, stderr.String())
	}
	if n := strings.Count(stderr.String(), "] PASS"); n != 2 {
		t.Fatalf("%d of 2 runs passed:\n%s", n, stderr.String())
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(filepath.Join(c.workDir, ".cache"), &st); err != nil || st.Type != 0x01021994 {
		t.Fatalf("the worker's cache is not a tmpfs: %v", err)
	}
	bases, _ := filepath.Glob(filepath.Join(c.workDir, ".cache-disk", "bases", "*", ".done"))
	inMemory, _ := filepath.Glob(filepath.Join(c.workDir, ".cache", "bases", "*", ".done"))
	if len(bases) != 1 || len(inMemory) != 0 {
		t.Fatalf("%d bases on disk and %d in memory, want 1 and 0", len(bases), len(inMemory))
	}
	log := c.logs[0].String()
	if n := strings.Count(log, "memory cache"); n != 1 || !strings.Contains(log, "is full") {
		t.Fatalf("want one line saying the memory cache is full, got %d:\n%s", n, log)
	}
}
