package store_test

import (
	"testing"

	"github.com/tiny-agent/tiny-go/internal/session/sessiontest"
	"github.com/tiny-agent/tiny-go/internal/store"
	"github.com/tiny-agent/tiny-go/internal/store/storetest"
)

// BenchmarkOpenLarge opens a large session for writing, as resume does
// (reduce, check the integrity records, adopt), against the json.Valid
// floor over the same file (see sessiontest.BenchFile for the file). The
// file sits in a sessions directory, so the integrity records are kept
// and checked: the first open records the file, every later one verifies
// it in the pass that reduces it.
func BenchmarkOpenLarge(b *testing.B) {
	src, runs := sessiontest.BenchFile(b)
	cwd, id := storetest.InstallSession(b, src)
	sessiontest.BenchReaders(b, src, runs, sessiontest.Reader{Name: "open", Read: func(b *testing.B) {
		s, err := store.Open(cwd, id, store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Close(); err != nil {
			b.Fatal(err)
		}
	}})
}
