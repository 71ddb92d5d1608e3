package fleet

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// treeOf describes dir: each path with its type, mode and content or
// link target.
func treeOf(t *testing.T, dir string) map[string]string {
	got := map[string]string{}
	err := walkTree(dir, nil, func(rel string, info fs.FileInfo) error {
		v := info.Mode().String()
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(filepath.Join(dir, rel))
			v += " -> " + l
		case info.Mode().IsRegular():
			b, _ := os.ReadFile(filepath.Join(dir, rel))
			v += " " + string(b)
		}
		got[rel] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// The change sets of a run of steps, applied in order to the base on
// another machine, make the same tree: writes, deletions, a folder that
// becomes a file and a file that becomes a folder, links, modes; and
// content written twice is stored once.
func TestChangeSetsRebuildTheWorkspace(t *testing.T) {
	src, dst := filepath.Join(t.TempDir(), "src"), filepath.Join(t.TempDir(), "dst")
	for _, dir := range []string{src, dst} {
		writeTestBase(t, dir)
	}
	ix, err := walkIndex(src, nil)
	must(t, err)
	checkChangeSets(t, src, dst, ix)
}

// The same over an overlay on the base, where only the upper layer is
// walked: whiteouts are deletions, an opaque folder replaces the base's.
func TestChangeSetsOfAnOverlay(t *testing.T) {
	base, root, dst := filepath.Join(t.TempDir(), "base"), t.TempDir(), filepath.Join(t.TempDir(), "dst")
	writeTestBase(t, base)
	writeTestBase(t, dst)
	src := filepath.Join(root, "repo")
	upper, err := layOut(context.Background(), base, root, src)
	must(t, err)
	if upper == "" {
		t.Skip("this process may not mount an overlay (not root, no CAP_SYS_ADMIN)")
	}
	t.Cleanup(func() { unmount(src) })
	checkChangeSets(t, src, dst, &index{entries: map[string]indexEntry{}, upper: upper})
	fresh := filepath.Join(t.TempDir(), "fresh")
	writeTestBase(t, fresh)
	if got, want := mapLines(treeOf(t, base)), mapLines(treeOf(t, fresh)); !slices.Equal(got, want) {
		t.Errorf("the cached base changed under the overlay: %v", got)
	}
}

func writeTestBase(t *testing.T, dir string) {
	must(t, os.MkdirAll(filepath.Join(dir, "d", "e"), 0o755))
	must(t, os.MkdirAll(filepath.Join(dir, "dd"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "d", "e", "f.txt"), []byte("f"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "dd", "old"), []byte("old"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "x"), []byte("x"), 0o644))
	must(t, os.MkdirAll(filepath.Join(dir, "m", "n"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "m", "n", "g.txt"), []byte("g"), 0o644))
}

// checkChangeSets changes src in steps; after each, the change set
// applied to dst (the base) makes the same tree.
func checkChangeSets(t *testing.T, src, dst string, ix *index) {
	ctx := context.Background()
	blobs, err := OpenBlobs(ctx, "mem://")
	must(t, err)
	cas := &contentStore{blobs: blobs}
	puts := 0
	put := func(h string, data []byte) error { puts++; return cas.put(ctx, h, data) }
	steps := []func(){
		func() {
			must(t, os.WriteFile(filepath.Join(src, "a.txt"), []byte("changed"), 0o755))
			must(t, os.WriteFile(filepath.Join(src, "new.txt"), []byte("same"), 0o600))
			must(t, os.WriteFile(filepath.Join(src, "d", "copy.txt"), []byte("same"), 0o644))
		},
		func() {
			must(t, os.RemoveAll(filepath.Join(src, "d", "e")))
			must(t, os.Symlink("a.txt", filepath.Join(src, "link")))
			must(t, os.Remove(filepath.Join(src, "x")))
			must(t, os.MkdirAll(filepath.Join(src, "x", "y"), 0o700))
		},
		func() {
			must(t, os.RemoveAll(filepath.Join(src, "d")))
			must(t, os.WriteFile(filepath.Join(src, "d"), []byte("now a file"), 0o644))
			must(t, os.Chmod(filepath.Join(src, "new.txt"), 0o644))
		},
		func() {
			// A folder of the base made anew: what it had is gone.
			must(t, os.RemoveAll(filepath.Join(src, "dd")))
			must(t, os.MkdirAll(filepath.Join(src, "dd"), 0o755))
			must(t, os.WriteFile(filepath.Join(src, "dd", "new"), []byte("same"), 0o644))
		},
		func() {
			// A folder of the base moved aside and changed there, as a
			// transaction keeps an original (an overlay's redirect).
			must(t, os.MkdirAll(filepath.Join(src, "aside"), 0o755))
			must(t, os.Rename(filepath.Join(src, "m"), filepath.Join(src, "aside", "m")))
			must(t, os.WriteFile(filepath.Join(src, "aside", "m", "h.txt"), []byte("h"), 0o644))
		},
		func() {
			// ... and back, as a rewind puts it.
			must(t, os.Rename(filepath.Join(src, "aside", "m"), filepath.Join(src, "m")))
			must(t, os.WriteFile(filepath.Join(src, "m", "n", "g.txt"), []byte("g more"), 0o644))
		},
		func() {}, // nothing changed: an empty change set
	}
	for i, step := range steps {
		step()
		cs, next, err := ix.scan(src, nil, put)
		must(t, err)
		if i == len(steps)-1 && len(cs.Changes) != 0 {
			t.Errorf("step %d changed nothing, its change set has %v", i+1, cs.Changes)
		}
		must(t, cs.apply(ctx, dst, cas.get))
		ix = next
		want, got := treeOf(t, src), treeOf(t, dst)
		if strings.Join(mapLines(want), "\n") != strings.Join(mapLines(got), "\n") {
			t.Fatalf("after step %d:\nwant %v\ngot  %v", i+1, mapLines(want), mapLines(got))
		}
	}
	objects := 0
	it := blobs.b.List(nil)
	for {
		if _, err := it.Next(ctx); err != nil {
			break
		}
		objects++
	}
	// "changed", "same" (three times), "now a file", "g" (moved), "h", "g more"
	if objects != 6 {
		t.Errorf("the store holds %d objects, want 6 (identical content once)", objects)
	}
}

func mapLines(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+": "+v)
	}
	slices.Sort(out)
	return out
}

// A change set never writes outside the workspace.
func TestChangeSetRefusesToLeaveTheWorkspace(t *testing.T) {
	dir := t.TempDir()
	cs := changeSet{Changes: []change{{Path: "../escape", Mode: 0o644, Hash: strings.Repeat("0", 64)}}}
	err := cs.apply(context.Background(), dir, func(context.Context, string) ([]byte, error) { return []byte("x"), nil })
	if err == nil {
		t.Fatal("a change set wrote ../escape")
	}
	must(t, os.Symlink("/", filepath.Join(dir, "out")))
	cs = changeSet{Changes: []change{{Path: "out/etc-file", Mode: 0o644, Hash: strings.Repeat("0", 64)}}}
	if err := cs.apply(context.Background(), dir, func(context.Context, string) ([]byte, error) { return []byte("x"), nil }); err == nil {
		t.Fatal("a change set wrote through a link out of the workspace")
	}
}

// FuzzChangeSetStaysInTheWorkspace applies change sets decoded from any
// bytes (a store is not trusted): whatever they name, nothing appears
// outside the workspace.
func FuzzChangeSetStaysInTheWorkspace(f *testing.F) {
	f.Add([]byte(`{"changes":[{"p":"a/b","h":"00","m":420}]}`))
	f.Add([]byte(`{"changes":[{"p":"../x","h":"00","m":420}]}`))
	f.Add([]byte(`{"changes":[{"p":"l","m":134218221,"l":".."},{"p":"l/x","h":"00","m":420}]}`))
	f.Add([]byte(`{"changes":[{"p":"d","m":2147484141,"o":true},{"p":"d","d":true}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var cs changeSet
		if json.Unmarshal(data, &cs) != nil {
			return
		}
		outer := t.TempDir()
		dir := filepath.Join(outer, "ws")
		must(t, os.Mkdir(dir, 0o755))
		_ = cs.apply(context.Background(), dir, func(context.Context, string) ([]byte, error) { return []byte("x"), nil })
		entries, err := os.ReadDir(outer)
		must(t, err)
		if len(entries) != 1 || entries[0].Name() != "ws" {
			t.Fatalf("a change set wrote outside the workspace: %v", entries)
		}
	})
}
