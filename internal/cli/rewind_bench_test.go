package cli

import (
	"context"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/cli/rewindcmd"
	"github.com/tiny-agent/tiny-go/internal/cli/sessionopen"
	"github.com/tiny-agent/tiny-go/internal/session/sessiontest"
	"github.com/tiny-agent/tiny-go/internal/store"
	"github.com/tiny-agent/tiny-go/internal/store/storetest"
)

// BenchmarkRewindPlan measures, against the json.Valid floor in the same
// run, planning `session rewind --turn 1 --conversation-only` (one
// streamed pass listing the user turns) and finding and opening the
// session --continue resumes (headers, then one reduce by the open),
// beside what --continue did before: list every session reduced, then
// open the newest (a second reduce). See sessiontest.BenchFile for the
// file.
func BenchmarkRewindPlan(b *testing.B) {
	src, runs := sessiontest.BenchFile(b)
	cwd, id := storetest.InstallSession(b, src)
	s, err := store.Open(cwd, id, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	path := s.Path()
	s.Close()
	noFinish := func(string) error { return nil }
	sessiontest.BenchReaders(b, src, runs,
		sessiontest.Reader{Name: "rewind-plan", Read: func(b *testing.B) {
			j, err := rewindcmd.Plan(context.Background(), rewindcmd.Request{Path: path, Turn: 1, Conversation: true}, 0)
			if err != nil || j.Turn.N != 1 {
				b.Fatal(err)
			}
		}},
		sessiontest.Reader{Name: "continue", Read: func(b *testing.B) {
			s, err := sessionopen.OpenNewest(cwd, store.Options{}, noFinish)
			if err != nil {
				b.Fatal(err)
			}
			s.Close()
		}},
		sessiontest.Reader{Name: "list+open", Read: func(b *testing.B) {
			list, err := store.List(cwd)
			if err != nil || len(list) != 1 {
				b.Fatal(err)
			}
			s, err := store.Open(cwd, list[0].ID, store.Options{})
			if err != nil {
				b.Fatal(err)
			}
			s.Close()
		}},
	)
}
