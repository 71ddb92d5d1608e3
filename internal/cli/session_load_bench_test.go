package cli

import (
	"io"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/cli/interactive"
	"github.com/tiny-agent/tiny-go/internal/cli/undowire"
	"github.com/tiny-agent/tiny-go/internal/recovery"
	"github.com/tiny-agent/tiny-go/internal/session/sessiontest"
	"github.com/tiny-agent/tiny-go/internal/store"
	"github.com/tiny-agent/tiny-go/internal/store/storetest"
)

// BenchmarkSessionRead runs `tiny-go session state`, `session verify` and
// `session show` in process on a large generated session (see
// sessiontest.BenchFile), beside "valid", the json.Valid line loop over
// the same file: the target is each command ≥ 0.8 × valid in MB/s. The
// file sits in a sessions directory, so verify checks its integrity
// records (written by opening it once for writing).
func BenchmarkSessionRead(b *testing.B) {
	src, runs := sessiontest.BenchFile(b)
	cwd, id := storetest.InstallSession(b, src)
	s, err := store.Open(cwd, id, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	s.Close()
	var readers []sessiontest.Reader
	for _, cmd := range []string{"state", "verify", "show"} {
		readers = append(readers, sessiontest.Reader{Name: cmd, Read: func(b *testing.B) {
			if code := Main([]string{"--cwd", cwd, "session", cmd, id}, nil, io.Discard, io.Discard, func(string) string { return "" }); code != 0 {
				b.Fatalf("session %s: exit %d", cmd, code)
			}
		}})
	}
	sessiontest.BenchReaders(b, src, runs, readers...)
}

// BenchmarkResume measures what resuming a large session costs before the
// prompt can take input, the part that grows with the session: open it
// for writing (reduce, integrity check), the truncation check, the
// planner's decision and the recap the UI shows. The rest of start-up
// (tools, providers, the terminal) does not depend on the session.
func BenchmarkResume(b *testing.B) {
	src, runs := sessiontest.BenchFile(b)
	cwd, id := storetest.InstallSession(b, src)
	sessiontest.BenchReaders(b, src, runs, sessiontest.Reader{Name: "resume", Read: func(b *testing.B) {
		s, err := store.Open(cwd, id, store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := undowire.CheckNotTruncated(s); err != nil {
			b.Fatal(err)
		}
		st := s.State()
		if _, ok := recovery.Plan(st, recovery.Current{}).(recovery.Finish); !ok && st.Operation != nil {
			b.Fatal("the generated session has an open operation")
		}
		if len(interactive.RecapOf(st)) == 0 {
			b.Fatal("no recap")
		}
		s.Close()
	}})
}
