package overlay

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkApplyRmNodeModules: what applying `rm -rf node_modules` of
// 3,000 files costs: one whiteout, one rename into orig/.
func BenchmarkApplyRmNodeModules(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root to mount overlays")
	}
	t := &testing.T{}
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		base := b.TempDir()
		tree := filepath.Join(base, "tree")
		os.MkdirAll(filepath.Join(tree, "node_modules"), 0o755)
		for j := range 3000 {
			d := filepath.Join(tree, "node_modules", fmt.Sprintf("p%d", j/30))
			os.MkdirAll(d, 0o755)
			os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d.js", j)), []byte("module.exports = 1\n"), 0o644)
		}
		tx, err := Begin(filepath.Join(base, "tx"), tree, "tx1")
		if err != nil {
			b.Fatal(err)
		}
		runOver(t, tx, "rm -rf node_modules", false)
		b.StartTimer()
		changes, err := tx.Changes()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tx.Apply(changes); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApply40Files: what applying a command's 40 new files in
// directories of the tree costs (each rename's directories are opened
// beneath the tree, without following symlinks).
func BenchmarkApply40Files(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root to mount overlays")
	}
	t := &testing.T{}
	for b.Loop() {
		b.StopTimer()
		base := b.TempDir()
		tree := filepath.Join(base, "tree")
		os.MkdirAll(filepath.Join(tree, "src", "a", "b"), 0o755)
		tx, err := Begin(filepath.Join(base, "tx"), tree, "tx1")
		if err != nil {
			b.Fatal(err)
		}
		runOver(t, tx, "for i in $(seq 1 40); do echo $i > src/a/b/f$i; done", false)
		b.StartTimer()
		changes, err := tx.Changes()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tx.Apply(changes); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApplyMvDirectory: what applying `mv data data2` costs (the
// changes read, the mirror of hard links kept in orig/, the rename),
// beside the plain mv of the same tree, for a folder of 50 files and one
// of 3,000 in 100 folders (the cost goes with the entries, not the bytes:
// one link each).
func BenchmarkApplyMvDirectory(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root to mount overlays")
	}
	for _, n := range []int{50, 3000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			t := &testing.T{}
			var plain time.Duration
			for b.Loop() {
				b.StopTimer()
				base := b.TempDir()
				tree := filepath.Join(base, "tree")
				for j := range n {
					d := filepath.Join(tree, "data", fmt.Sprintf("p%d", j/30))
					os.MkdirAll(d, 0o755)
					os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d", j)), []byte("data\n"), 0o644)
				}
				t0 := time.Now()
				if err := os.Rename(filepath.Join(tree, "data"), filepath.Join(tree, "plain")); err != nil {
					b.Fatal(err)
				}
				plain += time.Since(t0)
				os.Rename(filepath.Join(tree, "plain"), filepath.Join(tree, "data"))
				tx, err := Begin(filepath.Join(base, "tx"), tree, "tx1")
				if err != nil {
					b.Fatal(err)
				}
				runOver(t, tx, "mv data data2", false)
				b.StartTimer()
				changes, err := tx.Changes()
				if err != nil {
					b.Fatal(err)
				}
				if _, err := tx.Apply(changes); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(plain.Nanoseconds())/float64(b.N), "plain-ns/op")
		})
	}
}
