package fleet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// makeTree writes n files of 1 KB in folders of 100 under dir.
func makeTree(b *testing.B, dir string, n int) {
	body := make([]byte, 1000)
	for i := range n {
		d := filepath.Join(dir, fmt.Sprintf("d%03d", i/100))
		if i%100 == 0 {
			if err := os.MkdirAll(d, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%03d", i%100)), append([]byte(strconv.Itoa(i)), body...), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStepChangeSet is the syncer's work per settled step (one file
// changed) over a tree of 1 and of 20,000 files: the walk against the
// index, the hash of what changed, the upload to a file:// store. With
// overlay, the tree is an overlay on a base and only its upper layer is
// walked.
//
//	go test -run '^$' -bench BenchmarkStepChangeSet -benchtime 20x ./internal/fleet
func BenchmarkStepChangeSet(b *testing.B) {
	for _, bc := range []struct {
		n       int
		overlay bool
	}{{1, false}, {20000, false}, {1, true}, {20000, true}} {
		b.Run(fmt.Sprintf("files=%d/overlay=%v", bc.n, bc.overlay), func(b *testing.B) {
			ctx := context.Background()
			dir := b.TempDir()
			makeTree(b, dir, bc.n)
			blobs, err := OpenBlobs(ctx, "file://"+b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			cas := &contentStore{blobs: blobs}
			ix, err := walkIndex(dir, skipSession)
			if err != nil {
				b.Fatal(err)
			}
			if bc.overlay {
				root := b.TempDir()
				repo := filepath.Join(root, "repo")
				upper, err := layOut(ctx, dir, root, repo)
				if err != nil || upper == "" {
					b.Skipf("no overlay: %v", err)
				}
				b.Cleanup(func() { unmount(repo) })
				dir, ix = repo, &index{entries: map[string]indexEntry{}, upper: upper}
			}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if err := os.WriteFile(filepath.Join(dir, "d000", "f000"), []byte(strconv.Itoa(i)), 0o644); err != nil {
					b.Fatal(err)
				}
				cs, next, err := ix.scan(dir, skipSession, func(h string, data []byte) error { return cas.put(ctx, h, data) })
				if err != nil || len(cs.Changes) == 0 {
					b.Fatalf("%v %v", cs.Changes, err)
				}
				ix = next
			}
		})
	}
}

// BenchmarkLayOut lays out a workspace from a cached base of 20,000 files
// (overlay where the process may mount, else cp --reflink=auto).
//
//	go test -run '^$' -bench BenchmarkLayOut -benchtime 5x ./internal/fleet
func BenchmarkLayOut(b *testing.B) {
	base := filepath.Join(b.TempDir(), "repo")
	makeTree(b, base, 20000)
	work := b.TempDir()
	for i := 0; b.Loop(); i++ {
		root := filepath.Join(work, strconv.Itoa(i))
		repo := filepath.Join(root, "repo")
		if _, err := layOut(context.Background(), base, root, repo); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		unmount(repo)
		_ = os.RemoveAll(root)
		b.StartTimer()
	}
}
