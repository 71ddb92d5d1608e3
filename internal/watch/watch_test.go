package watch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func start(t *testing.T, opts Options) (root string, tr *Tracker) {
	t.Helper()
	root, syncDir := t.TempDir(), t.TempDir()
	for _, d := range []string{"a/b", "skip/me", ".git"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if opts.Skip == nil {
		opts.Skip = func(rel string) bool { return rel == "skip" || rel == ".git" }
	}
	tr, err := Start(root, syncDir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return root, tr
}

func syncNow(t *testing.T, tr *Tracker) Changes {
	t.Helper()
	c, err := tr.Sync(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func keys(m map[string]bool) []string { return slices.Sorted(maps.Keys(m)) }

// Sync returns every change made before it, and only once.
func TestSyncReportsEveryChangeOnce(t *testing.T) {
	root, tr := start(t, Options{})
	if c := syncNow(t, tr); len(c.Paths) != 0 || c.Lost != "" {
		t.Fatalf("changes before any: %+v", c)
	}
	for i := range 200 {
		os.WriteFile(filepath.Join(root, "a/b", fmt.Sprintf("f%d", i)), []byte("x"), 0o644)
	}
	os.WriteFile(filepath.Join(root, "skip/me/ignored"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(root, ".git/HEAD"), []byte("x"), 0o644)
	c := syncNow(t, tr)
	if len(c.Paths) != 200 || c.Lost != "" {
		t.Fatalf("want the 200 files, got %d: %v (lost %q)", len(c.Paths), keys(c.Paths), c.Lost)
	}
	if c := syncNow(t, tr); len(c.Paths) != 0 {
		t.Fatalf("reported twice: %v", keys(c.Paths))
	}
}

// A new directory (made here or moved in, filled before its watch could
// be placed) is reported as a subtree to scan, and watched from then on;
// a directory moved away is reported as a subtree that went.
func TestDirectoriesAreSubtrees(t *testing.T) {
	root, tr := start(t, Options{})
	elsewhere := t.TempDir()
	os.MkdirAll(filepath.Join(elsewhere, "in/deep"), 0o755)
	os.WriteFile(filepath.Join(elsewhere, "in/deep/f"), []byte("x"), 0o644)
	if err := os.Rename(filepath.Join(elsewhere, "in"), filepath.Join(root, "in")); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(root, "new/sub"), 0o755)
	c := syncNow(t, tr)
	if !c.Paths["in"] || !c.Paths["new"] {
		t.Fatalf("new directories not subtrees: %v", c.Paths)
	}
	os.WriteFile(filepath.Join(root, "in/deep/g"), []byte("x"), 0o644)
	if c := syncNow(t, tr); !slices.Equal(keys(c.Paths), []string{"in/deep/g"}) {
		t.Fatalf("the moved-in directory is not watched: %v", c.Paths)
	}
	if err := os.Rename(filepath.Join(root, "a"), filepath.Join(elsewhere, "a")); err != nil {
		t.Fatal(err)
	}
	if c := syncNow(t, tr); !c.Paths["a"] {
		t.Fatalf("a directory moved away is not a subtree: %v", c.Paths)
	}
	// Its watches went with it: changes over there are not ours.
	os.WriteFile(filepath.Join(elsewhere, "a/b/later"), []byte("x"), 0o644)
	if c := syncNow(t, tr); len(c.Paths) != 0 {
		t.Fatalf("events from a directory moved away: %v", c.Paths)
	}
}

func TestWatchLimit(t *testing.T) {
	root, syncDir := t.TempDir(), t.TempDir()
	for i := range 5 {
		os.MkdirAll(filepath.Join(root, fmt.Sprint(i)), 0o755)
	}
	if _, err := Start(root, syncDir, Options{MaxWatches: 3}); !errors.Is(err, ErrLimit) {
		t.Fatalf("want ErrLimit, got %v", err)
	}
}

func TestLoseAsksForAScan(t *testing.T) {
	_, tr := start(t, Options{})
	tr.Lose("overflow")
	if c := syncNow(t, tr); c.Lost != "overflow" {
		t.Fatalf("lost %q", c.Lost)
	}
	if c := syncNow(t, tr); c.Lost != "" {
		t.Fatalf("lost twice: %q", c.Lost)
	}
}
