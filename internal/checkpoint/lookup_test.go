package checkpoint

import (
	"context"
	"fmt"
	"maps"
	"math/bits"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/checkpoint/checkpointtest"
)

// name is the path of the i-th file of a trackedTree.
func name(i int) string { return fmt.Sprintf("d%d/f%d.txt", i%7, i) }

// trackedTree makes a directory of n files (a committed git repository
// in git mode) and opens a tracked store on it.
func trackedTree(t *testing.T, mode string, n int) (string, *Store, *warnings) {
	t.Helper()
	dir := t.TempDir()
	if mode == "git" {
		if _, err := exec.LookPath("git"); err != nil {
			t.Skip("no git")
		}
		checkpointtest.Sh(t, dir, "git init -q && echo '*.log' > .gitignore")
	}
	for i := range n {
		writeFile(t, dir, name(i), fmt.Sprintf("file %d\n", i))
	}
	if mode == "git" {
		checkpointtest.Sh(t, dir, "git add -A && git -c user.name=t -c user.email=t@t commit -qm init")
	}
	s, err := Open(dir, Options{DisableGit: mode == "plain"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	w := &warnings{}
	s.Track(w.add)
	return dir, s, w
}

// Tracked snapshots are skip deltas: each names only the paths changed
// since its base, no manifest lists the tree again, a chain is at most
// log2 of the snapshots long, and every snapshot (also of a second
// process standing on the first one's chain) reads back as its tree, by
// the whole list and by a lookup of each path.
func TestTrackedSkipDeltas(t *testing.T) {
	for _, mode := range []string{"plain", "git"} {
		t.Run(mode, func(t *testing.T) {
			const files = 200
			steps := 300
			if mode == "git" || testing.Short() {
				steps = 140
			}
			dir, s, w := trackedTree(t, mode, files)
			ctx := context.Background()
			var refs []string
			var wants []map[string]string
			touched := map[string]bool{}
			changes := 0
			change := func(path string) { touched[path] = true; changes++ }
			for i := range steps {
				writeFile(t, dir, name(i%20), fmt.Sprintf("step %d\n", i))
				change(name(i % 20))
				if i%7 == 3 {
					os.Remove(filepath.Join(dir, fmt.Sprintf("new%d", i-7)))
					writeFile(t, dir, fmt.Sprintf("new%d", i), "new\n")
					change(fmt.Sprintf("new%d", i-7))
					change(fmt.Sprintf("new%d", i))
				}
				rec := s.Snapshot(ctx)
				if rec.Missing != "" {
					t.Fatal(rec.Missing)
				}
				refs, wants = append(refs, rec.Tree), append(wants, checkpointtest.TreeDigests(t, dir))
			}
			s.Close()
			// A second process: its baseline stands on the first one's chain.
			s2, err := Open(dir, Options{DisableGit: mode == "plain"})
			if err != nil {
				t.Fatal(err)
			}
			defer s2.Close()
			s2.Track(w.add)
			for i := range 40 {
				writeFile(t, dir, name(100+i%20), fmt.Sprintf("second %d\n", i))
				change(name(100 + i%20))
				rec := s2.Snapshot(ctx)
				if rec.Missing != "" {
					t.Fatal(rec.Missing)
				}
				refs, wants = append(refs, rec.Tree), append(wants, checkpointtest.TreeDigests(t, dir))
			}
			if lines := w.all(); len(lines) != 0 {
				t.Fatalf("tracking fell back: %q", lines)
			}
			fresh, err := Open(dir, Options{DisableGit: mode == "plain"})
			if err != nil {
				t.Fatal(err)
			}
			defer fresh.Close()
			named := map[string]bool{}
			stored := 0
			p := &planner{s: fresh, ctx: ctx, candidates: map[string]bool{}, gitKnown: map[string]map[string]*File{}}
			for i, ref := range refs {
				if got := withoutIgnored(snapDigests(t, fresh, Record{Tree: ref})); !maps.Equal(got, withoutIgnored(wants[i])) {
					t.Fatalf("snapshot %d: %v\nwant %v", i, got, wants[i])
				}
				whole, err := fresh.treeFiles(ref)
				if err != nil {
					t.Fatal(err)
				}
				for _, path := range []string{name(0), name(3), name(100), name(199), fmt.Sprintf("new%d", (i/7)*7+3), "nope"} {
					f, ok, err := p.lookup(ref, path)
					if err != nil {
						t.Fatal(err)
					}
					if g, has := whole[path]; has != ok || (ok && g != f) {
						t.Fatalf("snapshot %d, %s: lookup %v %+v, whole list %v %+v", i, path, ok, f, has, g)
					}
				}
				chain, _, err := fresh.chainOf(ref)
				if err != nil {
					t.Fatal(err)
				}
				seq := i + 1
				if i >= steps {
					seq = i - steps + 1
				}
				if limit := bits.Len(uint(seq)) + 2; i >= steps && len(chain) > limit+bits.Len(uint(steps))+2 || i < steps && len(chain) > limit+1 {
					t.Fatalf("snapshot %d: chain of %d manifests", i, len(chain))
				}
				for _, h := range chain {
					if named[h] {
						continue
					}
					named[h] = true
					m, err := fresh.storedManifestOf(h)
					if err != nil {
						t.Fatal(err)
					}
					// A manifest names only changed paths, never the tree.
					for path := range maps.Keys(m.files) {
						if !touched[path] {
							t.Fatalf("snapshot %d: manifest %s names %s, which no step changed", i, h[:15], path)
						}
					}
					stored += len(m.files) + len(m.removed)
				}
			}
			// Each change is stored in at most log2(snapshots)+1 manifests.
			if limit := changes * (bits.Len(uint(steps)) + 1); stored > limit {
				t.Fatalf("the manifests name %d paths for %d changes (limit %d)", stored, changes, limit)
			}
			t.Logf("%d changes in %d snapshots: the manifests name %d paths", changes, len(refs), stored)
		})
	}
}

// A tracked rewind compares no whole lists, also when the turn had a
// whole-tree scan in the middle (lost events), and restores bytes and
// modes; a file changed outside tiny-go since is skipped unless forced.
func TestTrackedRewindWalksDeltas(t *testing.T) {
	for _, mode := range []string{"plain", "git"} {
		t.Run(mode, func(t *testing.T) {
			dir, s, _ := trackedTree(t, mode, 300)
			idx := &strings.Builder{}
			r := NewRecorder(s, idx)
			ctx := context.Background()
			s.Snapshot(ctx)
			want := checkpointtest.TreeDigests(t, dir)
			for c := range 3 {
				after := r.BeforeEffect(ctx, "call-"+strconv.Itoa(c), "bash", jsontext.Value(`{}`))
				for j := range 10 {
					p := filepath.Join(dir, name(c*10+j))
					os.WriteFile(p, []byte(fmt.Sprintf("call %d\n", c)), 0o644)
					os.Chmod(p, 0o755)
				}
				os.Remove(filepath.Join(dir, name(200+c)))
				writeFile(t, dir, fmt.Sprintf("made/%d.txt", c), "made\n")
				if c == 1 {
					s.tr.t.Lose("test: queue overflowed") // this after snapshot scans the tree
				}
				after()
			}
			// A write to a file outside the working directory, in the turn.
			outside := filepath.Join(t.TempDir(), "outside.txt")
			os.WriteFile(outside, []byte("before\n"), 0o644)
			after := r.BeforeEffect(ctx, "call-w", "write", jsontext.Value(`{"path":`+strconv.Quote(outside)+`}`))
			os.WriteFile(outside, []byte("after\n"), 0o644)
			after()
			// Changed outside tiny-go after the turn.
			writeFile(t, dir, name(1), "the user's\n")
			recs, err := ReadIndex(strings.NewReader(idx.String()))
			if err != nil {
				t.Fatal(err)
			}
			before := s.listCompares.Load()
			plan, err := s.PlanRewind(ctx, recs, false)
			if err != nil {
				t.Fatal(err)
			}
			if n := s.listCompares.Load() - before; n != 0 {
				t.Fatalf("the plan compared %d pairs of whole lists", n)
			}
			if len(plan.Skipped) != 1 || plan.Skipped[0].Path != name(1) || !strings.Contains(plan.Skipped[0].Reason, "--force") {
				t.Fatalf("want d1/f1.txt skipped (changed outside), got %+v", plan.Skipped)
			}
			if len(plan.Actions) != 3*10-1+3+3+1 {
				t.Fatalf("%d actions: %+v", len(plan.Actions), plan.Actions)
			}
			plan, err = s.PlanRewind(ctx, recs, true)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.Apply(ctx, plan, true); err != nil {
				t.Fatal(err)
			}
			if got := checkpointtest.TreeDigests(t, dir); !maps.Equal(withoutIgnored(got), withoutIgnored(want)) {
				t.Fatalf("after the rewind:\n%v\nwant\n%v", got, want)
			}
			if b, _ := os.ReadFile(outside); string(b) != "before\n" {
				t.Fatalf("the file outside holds %q after the rewind", b)
			}
		})
	}
}

// Two snapshots whose chains stand on different full lists (a store whose
// chain was lost) are compared as lists: the one case that costs the
// tree, and it is still right.
func TestRewindAcrossWholeLists(t *testing.T) {
	dir := t.TempDir()
	seed(t, dir)
	k := newTask(t, dir, Options{DisableGit: true})
	want := checkpointtest.TreeDigests(t, dir)
	k.effect("bash", `{}`, func() {
		checkpointtest.Sh(t, dir, "echo changed > doc.md; chmod +x doc.md; rm run.sh; echo new > new.txt")
		os.Remove(filepath.Join(k.store.root, lastManifestFile))
		k.store.last, k.store.lastHash = nil, ""
	})
	before := k.store.listCompares.Load()
	sum := k.rewind(0, false)
	if n := k.store.listCompares.Load() - before; n != 1 {
		t.Fatalf("want one comparison of whole lists, got %d", n)
	}
	if got := checkpointtest.TreeDigests(t, dir); !maps.Equal(got, want) {
		t.Fatalf("after the rewind:\n%v\nwant\n%v\n%+v", got, want, sum)
	}
}
