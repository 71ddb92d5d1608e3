package checkpoint

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/checkpoint/checkpointtest"
)

// TestTrackedSnapshotChild is the child of TestKilledTrackedSnapshots:
// tracked checkpoints of commands that change files, in a loop, until it
// is killed.
func TestTrackedSnapshotChild(t *testing.T) {
	dir := os.Getenv("TINY_TRACK_CHILD_DIR")
	if dir == "" {
		t.Skip("the child of TestKilledTrackedSnapshots")
	}
	s, err := Open(dir, Options{DisableGit: os.Getenv("TINY_TRACK_CHILD_MODE") == "plain"})
	if err != nil {
		t.Fatal(err)
	}
	s.Track(nil)
	index, err := os.OpenFile(filepath.Join(dir, "..", "index.jsonl"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	r := NewRecorder(s, index)
	os.WriteFile(filepath.Join(dir, "..", "started"), nil, 0o600)
	for i := 0; ; i++ {
		after := r.BeforeEffect(context.Background(), "call-"+strconv.Itoa(i), "bash", jsontext.Value(`{}`))
		for j := range 20 {
			p := filepath.Join(dir, fmt.Sprintf("d%d/f%d.txt", j%4, (i+j)%50))
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(fmt.Sprintf("call %d file %d\n", i, j)), 0o644)
		}
		os.RemoveAll(filepath.Join(dir, fmt.Sprintf("gone%d", i-1)))
		os.MkdirAll(filepath.Join(dir, fmt.Sprintf("gone%d", i)), 0o755)
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("gone%d/x", i)), []byte("x"), 0o644)
		if os.Getenv("TINY_TRACK_CHILD_MODE") == "git" {
			// Git state and git-ignored files change too (gitstate.go,
			// ignored.go).
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("ign%d.log", i%5)), []byte(fmt.Sprint("log ", i)), 0o644)
			cmd := exec.Command("git", "branch", "-f", fmt.Sprintf("b%d", i%3), "HEAD")
			cmd.Dir = dir
			cmd.Run()
		}
		after()
	}
}

// TestKilledTrackedSnapshots kills a process taking tracked checkpoints
// at different moments; after each kill every record of the index
// resolves to complete, intact content, and a new process takes correct
// checkpoints on top.
func TestKilledTrackedSnapshots(t *testing.T) {
	for _, mode := range []string{"plain", "git"} {
		if _, err := exec.LookPath("git"); err != nil && mode == "git" {
			continue
		}
		most := 0
		// afterFour kills once the index holds 4 records, however slow the
		// machine (a fixed 400 ms gave too few under load).
		const afterFour = -1
		for _, delay := range []time.Duration{0, 7 * time.Millisecond, 23 * time.Millisecond, 61 * time.Millisecond, 150 * time.Millisecond, 400 * time.Millisecond, afterFour} {
			t.Run(fmt.Sprintf("%s/%v", mode, delay), func(t *testing.T) {
				base := t.TempDir()
				dir := filepath.Join(base, "work")
				os.Mkdir(dir, 0o755)
				seed(t, dir)
				branches := ""
				if mode == "git" {
					checkpointtest.Sh(t, dir, "printf '*.log\\n' > .gitignore && echo kept > kept.log && git init -q && git add -A && git commit -qm init")
					branches = gitOut(t, dir, "for-each-ref", "--format=%(refname)", "refs/heads")
				}
				seeded := checkpointtest.TreeDigests(t, dir)
				cmd := exec.Command(os.Args[0], "-test.run=^TestTrackedSnapshotChild$")
				cmd.Env = append(os.Environ(), "TINY_TRACK_CHILD_DIR="+dir, "TINY_TRACK_CHILD_MODE="+mode)
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				for deadline := time.Now().Add(20 * time.Second); ; {
					if _, err := os.Stat(filepath.Join(base, "started")); err == nil {
						break
					}
					if time.Now().After(deadline) {
						cmd.Process.Kill()
						t.Fatal("the child did not start")
					}
					time.Sleep(time.Millisecond)
				}
				if delay == afterFour {
					waitForRecords(t, filepath.Join(base, "index.jsonl"), 4)
				}
				time.Sleep(max(delay, 0))
				cmd.Process.Kill()
				cmd.Wait()

				recs, err := ReadIndexFile(filepath.Join(base, "index.jsonl"))
				if err != nil {
					t.Fatal(err)
				}
				s, err := Open(dir, Options{DisableGit: mode == "plain"})
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				most = max(most, len(recs))
				for _, rec := range recs {
					if rec.Missing != "" {
						t.Fatalf("a record without its snapshot: %+v", rec)
					}
					snapDigests(t, s, rec) // every blob is there and intact
				}
				// Rewinding everything the killed process did (its last
				// call may have no after record) walks the chains it left
				// and puts the seed back.
				plan, err := s.PlanRewind(context.Background(), recs, false)
				if err != nil {
					t.Fatal(err)
				}
				sum, _, err := s.Apply(context.Background(), plan, false)
				if err != nil {
					t.Fatal(err)
				}
				if got := checkpointtest.TreeDigests(t, dir); !maps.Equal(got, seeded) {
					t.Fatalf("after rewinding the killed process's calls:\n%v\nwant\n%v\n%+v", got, seeded, sum)
				}
				if mode == "git" {
					for _, rec := range recs {
						if _, err := s.readGitStateBlob(rec.Git); rec.Git == "" || err != nil {
							t.Fatalf("a record without its git state: %+v (%v)", rec, err)
						}
					}
					if got := gitOut(t, dir, "for-each-ref", "--format=%(refname)", "refs/heads"); got != branches {
						t.Fatalf("branches after the rewind: %q, want %q\n%+v", got, branches, sum)
					}
				}
				if n := s.listCompares.Load(); n != 0 {
					t.Fatalf("the rewind compared %d pairs of whole lists", n)
				}
				// A new process tracks on top of what the killed one left.
				s.Track(func(line string) { t.Errorf("fell back: %s", line) })
				s.Snapshot(context.Background())
				checkpointtest.Sh(t, dir, "echo after >> doc.md && rm -rf d0")
				if got, want := snapDigests(t, s, s.Snapshot(context.Background())), checkpointtest.TreeDigests(t, dir); !maps.Equal(got, want) {
					t.Fatalf("after the kill: snapshot\n%v\nwant\n%v", got, want)
				}
			})
		}
		if most < 4 {
			t.Errorf("%s: no kill came after a few checkpoints (at most %d records)", mode, most)
		}
	}
}

// waitForRecords waits (up to 30 s) until the index at path holds n lines.
func waitForRecords(t *testing.T, path string, n int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && bytes.Count(b, []byte("\n")) >= n {
			return
		}
	}
	t.Fatalf("the child wrote fewer than %d records in 30 s", n)
}
