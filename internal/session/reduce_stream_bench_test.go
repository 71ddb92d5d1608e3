package session_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/session/sessiontest"
)

// BenchmarkLoad reads a session file from disk two ways, interleaved
// (with -count each round runs both): "valid" is the floor a reader can
// reach, a plain loop over the lines running encoding/json.Valid on each;
// "reduce" is session.ReduceReader, what resume and `session state` do.
// The target is reduce ≥ 0.8 × valid in MB/s. TINY_GO_BENCH_RUNS sets the
// number of runs (default 2,000; the 50k-run file is about 250 MB), and
// TINY_GO_BENCH_SESSION keeps the file at that path (reused when it
// exists) for measuring the commands on it. TINY_GO_BENCH_COMPACT_EVERY
// sets how many runs go between compactions (default 20); every
// compactionStarted lists the whole history (runtime.md §4), so a file
// compacted every 20 runs grows with the square of its runs: the 50k-run
// file is generated with 10000.
func BenchmarkLoad(b *testing.B) {
	runs, every := envInt(b, "TINY_GO_BENCH_RUNS", 2000), envInt(b, "TINY_GO_BENCH_COMPACT_EVERY", 20)
	path := os.Getenv("TINY_GO_BENCH_SESSION")
	if path == "" {
		path = filepath.Join(b.TempDir(), "load.jsonl")
	}
	if _, err := os.Stat(path); err != nil {
		// About 15 facts per run with the generator's defaults.
		data := sessiontest.Generate(sessiontest.Options{Facts: runs * 15, Seed: 7, CompactEvery: every})
		if err := os.WriteFile(path, data, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Run(fmt.Sprintf("runs=%d/valid", runs), func(b *testing.B) {
		b.SetBytes(fi.Size())
		for b.Loop() {
			if err := validLines(path); err != nil {
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

func envInt(b *testing.B, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		b.Fatalf("%s: %v", name, err)
	}
	return n
}

// validLines is the reference reader: each line through json.Valid.
func validLines(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 256<<10)
	var long []byte
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if !json.Valid(line) {
			return fmt.Errorf("invalid line")
		}
	}
}
