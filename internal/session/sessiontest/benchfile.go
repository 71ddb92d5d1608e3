package sessiontest

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
)

// BenchFile is the generated session the whole-session readers'
// benchmarks load, and the number of runs in it. TINY_GO_BENCH_RUNS sets
// the runs (default 2,000: 34.5 MB). TINY_GO_BENCH_COMPACT_EVERY sets the
// runs between compactions (default 20); every compactionStarted lists the
// whole history (runtime.md §4), so a file compacted every 20 runs grows
// with the square of its runs: the 50k-run file (522 MB) is generated with
// 10000. TINY_GO_BENCH_TEXT=code makes the text look like code and command
// output (Options.Code), as in real sessions, where JSON escapes most
// strings. TINY_GO_BENCH_SESSION keeps the file at that path, and reuses it
// when it exists, for measuring the commands on it.
func BenchFile(b testing.TB) (path string, runs int) {
	runs, every := envInt(b, "TINY_GO_BENCH_RUNS", 2000), envInt(b, "TINY_GO_BENCH_COMPACT_EVERY", 20)
	path = os.Getenv("TINY_GO_BENCH_SESSION")
	if path == "" {
		path = filepath.Join(b.TempDir(), "load.jsonl")
	}
	if _, err := os.Stat(path); err != nil {
		// About 15 facts per run with the generator's defaults.
		data := Generate(Options{Facts: runs * 15, Seed: 7, CompactEvery: every, Code: os.Getenv("TINY_GO_BENCH_TEXT") == "code"})
		if err := os.WriteFile(path, data, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	return path, runs
}

func envInt(b testing.TB, name string, def int) int {
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

// ValidLines is the floor the whole-session readers are measured
// against: the file read line by line, each line through
// encoding/json.Valid.
func ValidLines(path string) error {
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

// Header is the header of the session file at path.
func Header(b testing.TB, path string) session.Header {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadSlice('\n')
	if err != nil {
		b.Fatal(err)
	}
	h, c := session.DecodeHeader(line[:len(line)-1])
	if c != nil {
		b.Fatal(c)
	}
	return h
}

// Reader is one way of reading a whole session file, run once per
// iteration of its sub-benchmark.
type Reader struct {
	Name string
	Read func(b *testing.B)
}

// BenchReaders measures each reader against the floor on the session
// file at path (runs runs): the sub-benchmark "runs=N/valid" runs
// ValidLines, then "runs=N/<name>" each reader, all in MB/s of the file,
// so that their ratios come from one run.
func BenchReaders(b *testing.B, path string, runs int, readers ...Reader) {
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Run(fmt.Sprintf("runs=%d/valid", runs), func(b *testing.B) {
		b.SetBytes(fi.Size())
		for b.Loop() {
			if err := ValidLines(path); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, r := range readers {
		b.Run(fmt.Sprintf("runs=%d/%s", runs, r.Name), func(b *testing.B) {
			b.SetBytes(fi.Size())
			b.ReportAllocs()
			for b.Loop() {
				r.Read(b)
			}
		})
	}
}
