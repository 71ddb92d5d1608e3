package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/checkpoint/checkpointtest"
)

// warnings collects the lines a store's tracking says.
type warnings struct {
	mu    sync.Mutex
	lines []string
}

func (w *warnings) add(line string) { w.mu.Lock(); w.lines = append(w.lines, line); w.mu.Unlock() }
func (w *warnings) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.lines...)
}

// snapDigests is what a snapshot record holds, in checkpointtest.TreeDigests'
// form, so it can be compared with the tree on disk.
func snapDigests(t *testing.T, s *Store, rec Record) map[string]string {
	t.Helper()
	if rec.Missing != "" {
		t.Fatalf("snapshot missing: %s", rec.Missing)
	}
	files, err := s.treeFiles(rec.Tree)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for p, f := range files {
		if f.Missing != "" {
			out[p] = "missing: " + f.Missing
			continue
		}
		data, err := s.readBlob(f.Hash)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if f.Link {
			data = append([]byte("symlink:"), data...)
		}
		sum := sha256.Sum256(data)
		out[p] = hex.EncodeToString(sum[:8]) + strconv.FormatBool(f.Mode&0o111 != 0)
	}
	return out
}

// withoutIgnored drops what the test repositories ignore.
func withoutIgnored(m map[string]string) map[string]string {
	out := map[string]string{}
	for p, d := range m {
		if strings.HasSuffix(p, ".log") || strings.HasPrefix(p, "node_modules/") {
			continue
		}
		out[p] = d
	}
	return out
}

// TestTrackedSnapshotsMatchTheTree changes the tree in the ways a stat
// comparison or an event stream gets wrong and checks, after each, that
// the tracked snapshot holds exactly the tree (in both modes).
func TestTrackedSnapshotsMatchTheTree(t *testing.T) {
	for _, mode := range []string{"plain", "git"} {
		t.Run(mode, func(t *testing.T) {
			if _, err := exec.LookPath("git"); err != nil && mode == "git" {
				t.Skip("no git")
			}
			dir, outside := t.TempDir(), t.TempDir()
			seed(t, dir)
			writeFile(t, outside, "o.txt", "outside\n")
			if mode == "git" {
				writeFile(t, dir, ".gitignore", "*.log\nnode_modules/\n")
				writeFile(t, dir, "node_modules/dep/index.js", "dep\n")
				writeFile(t, dir, "kept.log", "ignored\n")
				checkpointtest.Sh(t, dir, "git init -q && git add -A && git commit -qm init")
			}
			s, err := Open(dir, Options{DisableGit: mode == "plain"})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			w := &warnings{}
			s.Track(w.add)
			ctx := context.Background()
			prev := s.Snapshot(ctx)
			if again := s.Snapshot(ctx); again.Tree != prev.Tree || again.Bytes != 0 {
				t.Fatalf("nothing changed, yet a new snapshot: %+v then %+v", prev, again)
			}
			steps := []struct{ name, script string }{
				{"same mtime, same size", "printf aaaa > same.txt && touch -d @1700000000 same.txt"},
				{"same mtime, same size (changed)", "printf bbbb > same.txt && touch -d @1700000000 same.txt"},
				{"hard link from outside", "ln " + filepath.Join(outside, "o.txt") + " linked.txt"},
				{"write through the outside link", "echo more >> " + filepath.Join(outside, "o.txt")},
				{"hard link inside", "ln doc.md doc-link.md"},
				{"write through the inside link", "echo via-link >> doc-link.md"},
				{"rename a file", "mv src/main.go src/app.go"},
				{"rename a directory", "mv src lib"},
				{"directory replaced by a file", "rm -rf lib && echo now-a-file > lib"},
				{"file replaced by a directory", "rm run.sh && mkdir -p run.sh/inner && echo x > run.sh/inner/f"},
				{"symlink", "ln -s doc.md link"},
				{"symlink retargeted", "ln -sfn notes link"},
				{"exec bit", "echo '#!/bin/sh' > tool.sh && chmod +x tool.sh"},
				{"new deep directory", "mkdir -p deep/a/b && echo 1 > deep/a/b/c && echo 2 > deep/a/d"},
				{"directory moved in from outside", "mkdir -p " + filepath.Join(outside, "mv/sub") + " && echo m > " + filepath.Join(outside, "mv/sub/f") + " && mv " + filepath.Join(outside, "mv") + " moved"},
				{"ignored files", "mkdir -p node_modules/new && echo n > node_modules/new/i.js && echo l > new.log && echo t > tracked.txt"},
				{"deletions", "rm doc.md && rm -rf deep"},
				{"a touch only", "touch tracked.txt"},
				{"created and removed within the command", "echo tmp > tmp.txt && rm tmp.txt"},
			}
			for _, st := range steps {
				checkpointtest.Sh(t, dir, st.script)
				rec := s.Snapshot(ctx)
				// Git-ignored files are covered too (ignored.go).
				got, want := snapDigests(t, s, rec), checkpointtest.TreeDigests(t, dir)
				if mode == "git" && !rec.All {
					t.Fatalf("%s: the tracked snapshot does not cover ignored files", st.name)
				}
				if !maps.Equal(got, want) {
					t.Fatalf("%s: snapshot\n%v\nwant\n%v", st.name, got, want)
				}
				if mode == "git" && !strings.HasPrefix(rec.Tree, "plain:") && rec.Tree != prev.Tree {
					t.Fatalf("%s: %s is a full git snapshot, not a tracked one", st.name, rec.Tree)
				}
				prev = rec
			}
			if lines := w.all(); len(lines) != 0 {
				t.Fatalf("tracking fell back: %q", lines)
			}
		})
	}
}

// TestTrackedRewindEachTurn rewinds each turn of a task recorded with
// tracking on, in both modes.
func TestTrackedRewindEachTurn(t *testing.T) {
	for _, mode := range []string{"plain", "git"} {
		for turn := 0; turn < 3; turn++ {
			dir := t.TempDir()
			if mode == "git" {
				if _, err := exec.LookPath("git"); err != nil {
					t.Skip("no git")
				}
				checkpointtest.Sh(t, dir, "git init -q && echo 'ignored.log' > .gitignore")
			}
			seed(t, dir)
			if mode == "git" {
				writeFile(t, dir, "ignored.log", "keep me\n")
				checkpointtest.Sh(t, dir, "git add -A && git commit -qm init")
			}
			k := newTask(t, dir, Options{DisableGit: mode == "plain"})
			w := &warnings{}
			k.store.Track(w.add)
			trees, starts := playThreeTurns(t, k)
			sum := k.rewind(starts[turn], false)
			if got := checkpointtest.TreeDigests(t, dir); !maps.Equal(got, trees[turn]) {
				t.Fatalf("%s turn %d: tree after rewind\n%v\nwant\n%v\nsummary %+v", mode, turn+1, got, trees[turn], sum)
			}
			if len(sum.Skipped) != 0 || len(sum.Warnings) != 0 || len(w.all()) != 0 {
				t.Fatalf("%s turn %d: unexpected skips %+v %q", mode, turn+1, sum, w.all())
			}
			k.store.Close()
		}
	}
}

// TestTrackingFallsBack meets the watch limit and a lost event queue:
// snapshots stay right, and each store says once that it fell back.
func TestTrackingFallsBack(t *testing.T) {
	t.Run("watch limit", func(t *testing.T) {
		dir := t.TempDir()
		seed(t, dir)
		s, err := Open(dir, Options{DisableGit: true, MaxWatches: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		w := &warnings{}
		s.Track(w.add)
		ctx := context.Background()
		s.Snapshot(ctx)
		for i := range 3 {
			checkpointtest.Sh(t, dir, "echo "+strconv.Itoa(i)+" >> src/main.go && touch -d @1700000000 src/main.go")
			rec := s.Snapshot(ctx)
			if got, want := snapDigests(t, s, rec), checkpointtest.TreeDigests(t, dir); !maps.Equal(got, want) {
				t.Fatalf("after the fallback: snapshot\n%v\nwant\n%v", got, want)
			}
		}
		lines := w.all()
		if len(lines) != 1 || !strings.Contains(lines[0], "fell back") || !strings.Contains(lines[0], "max_user_watches") {
			t.Fatalf("want one line saying tracking fell back at the watch limit, got %q", lines)
		}
	})
	t.Run("lost events", func(t *testing.T) {
		dir := t.TempDir()
		seed(t, dir)
		s, err := Open(dir, Options{DisableGit: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		w := &warnings{}
		s.Track(w.add)
		ctx := context.Background()
		s.Snapshot(ctx)
		for i := range 2 {
			// Stands for IN_Q_OVERFLOW: the change is made, its event is
			// not trusted; the snapshot must find it by a scan.
			checkpointtest.Sh(t, dir, "echo "+strconv.Itoa(i)+" >> doc.md")
			s.tr.t.Lose("test: queue overflowed")
			rec := s.Snapshot(ctx)
			if got, want := snapDigests(t, s, rec), checkpointtest.TreeDigests(t, dir); !maps.Equal(got, want) {
				t.Fatalf("after lost events: snapshot\n%v\nwant\n%v", got, want)
			}
		}
		// Tracking goes on after the scan.
		checkpointtest.Sh(t, dir, "echo tracked >> doc.md")
		if got, want := snapDigests(t, s, s.Snapshot(ctx)), checkpointtest.TreeDigests(t, dir); !maps.Equal(got, want) {
			t.Fatalf("after the rescan: snapshot\n%v\nwant\n%v", got, want)
		}
		if lines := w.all(); len(lines) != 1 || !strings.Contains(lines[0], "lost changes") {
			t.Fatalf("want one line saying changes were lost, got %q", lines)
		}
	})
}
