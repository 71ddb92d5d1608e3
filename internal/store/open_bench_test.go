package store

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/session/sessiontest"
)

// BenchmarkOpenLarge opens a large session for writing, as resume does
// (reduce, check the integrity records, adopt), against the json.Valid
// floor over the same file (see sessiontest.BenchFile for the file). The
// file sits in a sessions directory, so the integrity records are kept
// and checked: the first open records the file, every later one verifies
// it in the pass that reduces it.
func BenchmarkOpenLarge(b *testing.B) {
	src, runs := sessiontest.BenchFile(b)
	cwd, id := installSession(b, src)
	fi, err := os.Stat(src)
	if err != nil {
		b.Fatal(err)
	}
	b.Run(fmt.Sprintf("runs=%d/valid", runs), func(b *testing.B) {
		b.SetBytes(fi.Size())
		for b.Loop() {
			if err := sessiontest.ValidLines(src); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run(fmt.Sprintf("runs=%d/open", runs), func(b *testing.B) {
		b.SetBytes(fi.Size())
		b.ReportAllocs()
		for b.Loop() {
			s, err := Open(cwd, id, Options{})
			if err != nil {
				b.Fatal(err)
			}
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// installSession puts (a hard link to, or a copy of) the session file src
// into the sessions directory of a new working directory.
func installSession(b *testing.B, src string) (cwd, id string) {
	h := sessiontest.Header(b, src)
	cwd = b.TempDir()
	dir := SessionsDir(cwd)
	if err := os.MkdirAll(dir, dirMode); err != nil {
		b.Fatal(err)
	}
	dst := filepath.Join(dir, FileName(time.UnixMilli(h.CreatedAt), h.ID))
	if err := os.Link(src, dst); err != nil {
		data, err := os.ReadFile(src)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(dst, data, fileMode); err != nil {
			b.Fatal(err)
		}
	}
	return cwd, h.ID
}
