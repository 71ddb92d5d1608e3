package store

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// mappingsOf counts the mappings of path in /proc/self/maps.
func mappingsOf(t testing.TB, path string) int {
	t.Helper()
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		if strings.HasSuffix(sc.Text(), " "+path) {
			n++
		}
	}
	return n
}

// bigSession commits runs with long answers, so that the file spans
// many pages, and closes the store.
func bigSession(t *testing.T, cwd string, runs int) (id, path string) {
	t.Helper()
	s := createStore(t, cwd, Options{})
	for i := range runs {
		r := newTestRun(t)
		txs := r.transactions(strings.Repeat("prompt ", 200+i), strings.Repeat("answer ", 2000))
		for _, tx := range txs {
			commit(t, s, tx)
		}
	}
	id, path = s.ID(), s.Path()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return id, path
}

// A session opened (or read whole) leaves no mapping behind, however
// long the process lives and however many sessions it opens: the state
// holds copies of what it keeps. Truncating the file afterwards (another
// program, `truncate -s`) cannot fault a reader of the state, and the
// next commit refuses to write (the file is not what was committed).
func TestOpenedSessionHoldsNoMapping(t *testing.T) {
	cwd := t.TempDir()
	id, path := bigSession(t, cwd, 40)
	want := printed(t, reduceFile(t, path))
	for range 20 {
		s, err := Open(cwd, id, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if n := mappingsOf(t, path); n != 0 {
			t.Fatalf("an open store keeps %d mappings of its file", n)
		}
		s.Close()
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, _, c, err := ReadSession(f, session.ReadHooks{})
	if err != nil || c != nil {
		t.Fatal(err, c)
	}
	if n := mappingsOf(t, path); n != 0 {
		t.Fatalf("ReadSession keeps %d mappings of the file", n)
	}
	s, err := Open(cwd, id, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	if out, err := exec.Command("truncate", "-s", "4096", path).CombinedOutput(); err != nil {
		t.Fatalf("truncate: %v %s", err, out)
	}
	if got := printed(t, s.State()); got != want {
		t.Fatal("the open store's state changed with the file")
	}
	if got := printed(t, r.State()); got != want {
		t.Fatal("ReadSession's state changed with the file")
	}
	if err := commitErr(t, s); !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "was truncated to 4096 bytes") || !strings.Contains(err.Error(), "fork the session or start a new one") {
		t.Fatalf("commit after the truncation: %v", err)
	}
}

// A file cut short during the pass (here by a hook, at the header line,
// while the decoder reads ahead) is a *ChangedError naming the session,
// not a crash.
func TestReadSessionCutShortDuringThePass(t *testing.T) {
	cwd := t.TempDir()
	id, path := bigSession(t, cwd, 40)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cut := false
	_, _, _, err = ReadSession(f, session.ReadHooks{Line: func([]byte) {
		if !cut {
			cut = true
			if err := os.Truncate(path, 4096); err != nil {
				t.Error(err)
			}
		}
	}})
	var ce *ChangedError
	if !errors.As(err, &ce) || ce.Session != id || !errors.Is(err, session.ErrMappingFault) {
		t.Fatalf("got %v, want the session %s changed under tiny-go", err, id)
	}
	if !strings.Contains(err.Error(), "session "+id+" changed under tiny-go (truncated by another program") {
		t.Fatalf("the line: %v", err)
	}
	if n := mappingsOf(t, path); n != 0 {
		t.Fatalf("the failed read keeps %d mappings", n)
	}
}
