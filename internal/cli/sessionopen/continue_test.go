package sessionopen

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/store"
)

func create(t *testing.T, dir string) *store.Store {
	t.Helper()
	st, err := store.Create(dir, store.NewHeader{Provider: "p", Model: "m", EnvironmentIdentity: "e"}, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// --continue passes by a newer session that holds only its header, and
// takes an older one whose !commands wait beside it (their output is for
// the next prompt); the rewind finisher sees it first, and its failure
// stops the open.
func TestOpenNewestTakesAJournalledSession(t *testing.T) {
	dir := t.TempDir()
	if _, err := OpenNewest(dir, store.Options{}, func(string) error { return nil }); err == nil || !strings.Contains(err.Error(), "no session") {
		t.Fatalf("no sessions: %v", err)
	}
	older := create(t, dir)
	olderPath := older.Path()
	if err := AppendShell(olderPath, ShellRecord{ID: "1", State: "started", Command: "ls"}); err != nil {
		t.Fatal(err)
	}
	older.Close()
	time.Sleep(5 * time.Millisecond) // a later start
	create(t, dir).Close()

	var finished []string
	st, err := OpenNewest(dir, store.Options{}, func(p string) error { finished = append(finished, p); return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if st.Path() != olderPath || len(finished) != 1 || finished[0] != olderPath {
		t.Fatalf("opened %s (finished %v), want %s", st.Path(), finished, olderPath)
	}
	st.Close()
	stop := errors.New("being rewound")
	if _, err := OpenNewest(dir, store.Options{}, func(string) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("finisher's failure: %v", err)
	}
}

// A session this process created is removed once left only while it holds
// nothing: no fact and no !command waiting.
func TestEmptyCreated(t *testing.T) {
	dir := t.TempDir()
	st := create(t, dir)
	defer st.Close()
	EmptyCreated(false, st)()
	if _, err := os.Stat(st.Path()); err != nil {
		t.Fatalf("a session this process did not create was removed: %v", err)
	}
	if err := AppendShell(st.Path(), ShellRecord{ID: "1", State: "started", Command: "ls"}); err != nil {
		t.Fatal(err)
	}
	EmptyCreated(true, st)()
	if _, err := os.Stat(st.Path()); err != nil {
		t.Fatalf("a session holding a !command was removed: %v", err)
	}
	other := create(t, dir)
	defer other.Close()
	if !Empty(other) {
		t.Fatal("a new session is not empty")
	}
	EmptyCreated(true, other)()
	if _, err := os.Stat(other.Path()); !os.IsNotExist(err) {
		t.Fatalf("an empty created session was kept: %v", err)
	}
}
