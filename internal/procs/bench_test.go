package procs

import "testing"

// BenchmarkKillMarkedScan is the cost an abort, a timeout or an exit pays
// to look for a command's escapees: one pass over every process of the
// machine (its stat and its environment), nothing to kill.
func BenchmarkKillMarkedScan(b *testing.B) {
	tr, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	marker := tr.NewMarker()
	defer tr.Close()
	for b.Loop() {
		if k := tr.KillMarked(marker); k != 0 {
			b.Fatalf("killed %d", k)
		}
	}
}
