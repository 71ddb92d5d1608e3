package session_test

import (
	"fmt"
	"os"
	"testing"

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
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Run(fmt.Sprintf("runs=%d/valid", runs), func(b *testing.B) {
		b.SetBytes(fi.Size())
		for b.Loop() {
			if err := sessiontest.ValidLines(path); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run(fmt.Sprintf("runs=%d/reduce", runs), func(b *testing.B) {
		b.SetBytes(fi.Size())
		b.ReportAllocs()
		for b.Loop() {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			_, c, err := session.ReduceReader(f, fi.Size())
			f.Close()
			if err != nil || c != nil {
				b.Fatal(err, c)
			}
		}
	})
}
