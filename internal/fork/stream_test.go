package fork

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/session/sessiontest"
)

// bigSession writes a generated session of about runs runs (400: 4.5 MB)
// into a sessions directory and returns its path.
func bigSession(t testing.TB, runs int) string {
	dir := filepath.Join(t.TempDir(), ".tiny-agent", "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	data := sessiontest.Generate(sessiontest.Options{Facts: runs * 15, Seed: 7, CompactEvery: 20})
	h, c := session.DecodeHeader(data[:indexLF(data)])
	if c != nil {
		t.Fatal(c)
	}
	path := filepath.Join(dir, "2024-03-09T16-00-00-000Z_"+h.ID+".jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func indexLF(b []byte) int {
	for i, c := range b {
		if c == '\n' {
			return i
		}
	}
	return len(b)
}

// Write streams: forking a session near its start holds a small part of
// it at most (buffers and a reducer sized for the file), and forking all
// of it the reduced prefix (the text of compacted messages released),
// within issue 17's bound of 1.5 times the file; reading the file whole
// and building its copy took twice the file before reducing the copy.
func TestWriteStreamsTheSource(t *testing.T) {
	path := bigSession(t, 400)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	size := uint64(fi.Size())
	src, _ := os.ReadFile(path)
	bounds, err := Boundaries(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		at    int64
		bound uint64
	}{{at: bounds[10], bound: size / 2}, {at: -1, bound: size * 3 / 2}} {
		var res Result
		var werr error
		peak := sessiontest.PeakHeap(func() { res, werr = Write(path, tc.at, "", 0, time.Now()) })
		if werr != nil {
			t.Fatal(werr)
		}
		t.Logf("fork at %d of a %d-byte session: peak heap %d bytes", tc.at, size, peak)
		if peak > tc.bound {
			t.Errorf("fork at %d of a %d-byte session held %d bytes at once (bound %d)", tc.at, size, peak, tc.bound)
		}
		got, err := os.ReadFile(res.Path)
		if err != nil {
			t.Fatal(err)
		}
		want, err := prefixRef(src, tc.at, res.ID)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("fork at %d: %d bytes, want the %d of the whole-file fork", tc.at, len(got), len(want))
		}
		o, err := ReadOrigin(res.Path)
		if err != nil || o == nil || (tc.at >= 0 && o.At != tc.at) {
			t.Fatalf("origin %+v, %v", o, err)
		}
	}
}
