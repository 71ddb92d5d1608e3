package store_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/session/sessiontest"
	"github.com/tiny-agent/tiny-go/internal/store"
	"github.com/tiny-agent/tiny-go/internal/store/storetest"
)

// RepairFile reads the session in sections: cutting a junk line off a
// generated 4.7 MB session holds its reduced state (the text of compacted
// messages released) and the reader's batches, not the file beside a state
// with every text (the whole-file repair peaked at 14.4 MB, three times
// the file). The bound is the 1.5 × the file: on a loaded machine
// the sampled heap carries garbage the collector has not reached yet
// (0.8–1.1 × seen).
func TestRepairStreamsTheSession(t *testing.T) {
	data := sessiontest.Generate(sessiontest.Options{Facts: 400 * 15, Seed: 7, CompactEvery: 20})
	src := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(src, append(bytes.Clone(data), "not json\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	cwd, id := storetest.InstallSession(t, src)
	path, err := store.PathByID(cwd, id)
	if err != nil {
		t.Fatal(err)
	}
	size := uint64(len(data))
	var r *store.Repaired
	peak := sessiontest.PeakHeap(func() { r, err = store.RepairFile(path, time.Now()) })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("repair of a %d-byte session: peak heap %d bytes", size, peak)
	if peak > size*3/2 {
		t.Errorf("repair of a %d-byte session held %d bytes at once", size, peak)
	}
	kept, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Count(data, []byte{'\n'})
	if !bytes.Equal(kept, data) || r.Kept != int64(len(data)) || r.Removed != 9 || r.FirstLine != lines+1 || r.LastLine != lines+1 {
		t.Fatalf("kept %d bytes, repaired %+v", len(kept), r)
	}
	if cut, err := os.ReadFile(r.Backup); err != nil || string(cut) != "not json\n" {
		t.Fatalf("backup %q, %v", cut, err)
	}
}
