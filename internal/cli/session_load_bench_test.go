package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/recovery"
	"github.com/tiny-agent/tiny-go/internal/session/sessiontest"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// BenchmarkSessionRead runs `tiny-go session state`, `session verify` and
// `session show` in process on a large generated session (see
// sessiontest.BenchFile), beside "valid", the json.Valid line loop over
// the same file: the target is each command ≥ 0.8 × valid in MB/s. The
// file sits in a sessions directory, so verify checks its integrity
// records (written by opening it once for writing).
func BenchmarkSessionRead(b *testing.B) {
	src, runs := sessiontest.BenchFile(b)
	cwd, id := installBenchSession(b, src)
	s, err := store.Open(cwd, id, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	s.Close()
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
	for _, cmd := range []string{"state", "verify", "show"} {
		b.Run(fmt.Sprintf("runs=%d/%s", runs, cmd), func(b *testing.B) {
			b.SetBytes(fi.Size())
			b.ReportAllocs()
			for b.Loop() {
				if code := Main([]string{"--cwd", cwd, "session", cmd, id}, nil, io.Discard, io.Discard, func(string) string { return "" }); code != 0 {
					b.Fatalf("session %s: exit %d", cmd, code)
				}
			}
		})
	}
}

// BenchmarkResume measures what resuming a large session costs before the
// prompt can take input, the part that grows with the session: open it
// for writing (reduce, integrity check), the truncation check, the
// planner's decision and the recap the UI shows. The rest of start-up
// (tools, providers, the terminal) does not depend on the session.
func BenchmarkResume(b *testing.B) {
	src, runs := sessiontest.BenchFile(b)
	cwd, id := installBenchSession(b, src)
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
	b.Run(fmt.Sprintf("runs=%d/resume", runs), func(b *testing.B) {
		b.SetBytes(fi.Size())
		b.ReportAllocs()
		for b.Loop() {
			s, err := store.Open(cwd, id, store.Options{})
			if err != nil {
				b.Fatal(err)
			}
			if err := checkNotTruncated(s); err != nil {
				b.Fatal(err)
			}
			st := s.State()
			if _, ok := recovery.Plan(st, recovery.Current{}).(recovery.Finish); !ok && st.Operation != nil {
				b.Fatal("the generated session has an open operation")
			}
			if len(recapOf(st)) == 0 {
				b.Fatal("no recap")
			}
			s.Close()
		}
	})
}

// installBenchSession puts (a hard link to, or a copy of) the session file
// src into the sessions directory of a new working directory.
func installBenchSession(b *testing.B, src string) (cwd, id string) {
	h := sessiontest.Header(b, src)
	cwd = b.TempDir()
	dir := store.SessionsDir(cwd)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	dst := filepath.Join(dir, store.FileName(time.UnixMilli(h.CreatedAt), h.ID))
	if err := os.Link(src, dst); err != nil {
		data, err := os.ReadFile(src)
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	return cwd, h.ID
}
