package session_test

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/session/sessiontest"
)

// BenchmarkLoad reads a session file from disk two ways: "valid" is the
// floor a reader can reach, a plain loop over the lines running
// encoding/json.Valid on each; "reduce" is session.ReduceReader, what
// resume and `session state` do. The target is reduce ≥ 0.8 × valid in
// MB/s; run it several times in a row (not -count, which runs each
// sub-benchmark's rounds back to back) to interleave the two. See
// sessiontest.BenchFile for the file (TINY_GO_BENCH_RUNS,
// TINY_GO_BENCH_COMPACT_EVERY, TINY_GO_BENCH_SESSION).
func BenchmarkLoad(b *testing.B) {
	path, runs := sessiontest.BenchFile(b)
	sessiontest.BenchReaders(b, path, runs, sessiontest.Reader{Name: "reduce", Read: func(b *testing.B) {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			b.Fatal(err)
		}
		if _, c, err := session.ReduceReader(f, fi.Size()); err != nil || c != nil {
			b.Fatal(err, c)
		}
	}}, sessiontest.Reader{Name: "mapped", Read: func(b *testing.B) {
		readMapped(b, path, session.ReadHooks{})
	}}, sessiontest.Reader{Name: "copied", Read: func(b *testing.B) {
		readMapped(b, path, session.ReadHooks{Copy: true})
	}})
}

// readMapped reads the file at path through a populated mapping:
// "mapped" is the state referencing the file's bytes, "copied" the state
// copying what it keeps (what the store does, so that it can unmap the
// file once the read returns).
func readMapped(b *testing.B, path string, hooks session.ReadHooks) {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		b.Fatal(err)
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Munmap(data)
	if _, _, c, err := session.ReadMapped(data, hooks); err != nil || c != nil {
		b.Fatal(err, c)
	}
}
