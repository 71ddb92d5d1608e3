package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/session"
)

func TestList(t *testing.T) {
	cwd := t.TempDir()
	if got, err := List(cwd); err != nil || len(got) != 0 {
		t.Fatalf("List without a sessions directory: %v, %v", got, err)
	}
	clock := newTestClock()
	newSession := func(at time.Time) *Store {
		clock.mu.Lock()
		clock.now = at
		clock.mu.Unlock()
		return createStore(t, cwd, Options{Clock: clock.Now})
	}
	day := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

	idle := newSession(day)
	commitRun(t, idle, "first prompt")
	commitRun(t, idle, "  the\nlast   prompt of the idle session, which is long enough to be cut somewhere  ")
	idle.Close()

	open := newSession(day.Add(time.Hour))
	r := newTestRun(t)
	commit(t, open, r.accept("still running"))
	open.Close()

	corrupt := newSession(day.Add(2 * time.Hour))
	corrupt.Close()
	if err := os.WriteFile(corrupt.Path(), append(readFile(t, corrupt.Path()), "[]\n"...), 0o600); err != nil {
		t.Fatal(err)
	}

	// Skipped: a symlink with a canonical name and a foreign file.
	os.Symlink(idle.Path(), filepath.Join(SessionsDir(cwd), "2027-01-01T00-00-00-000Z_018f0000-0000-7000-8000-0000000000aa.jsonl"))
	os.WriteFile(filepath.Join(SessionsDir(cwd), "notes.txt"), []byte("x"), 0o600)

	got, err := List(cwd)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("listed %d sessions, want 3: %+v", len(got), got)
	}
	if got[0].ID != corrupt.ID() || got[1].ID != open.ID() || got[2].ID != idle.ID() {
		t.Errorf("order %s %s %s, want newest first", got[0].ID, got[1].ID, got[2].ID)
	}
	c := got[0]
	if c.State != SummaryCorrupt || c.Corruption == nil || c.Corruption.Code != session.CorruptEmptyTransaction || c.Model != "" {
		t.Errorf("corrupt summary %+v", c)
	}
	if !c.Started.Equal(day.Add(2 * time.Hour)) {
		t.Errorf("corrupt session started %v, want the file name stamp", c.Started)
	}
	o := got[1]
	if o.State != SummaryOpenRun || o.LastPrompt != "still running" || o.Model != "test/model" {
		t.Errorf("open summary %+v", o)
	}
	i := got[2]
	if i.State != SummaryIdle || !i.Started.Equal(day) {
		t.Errorf("idle summary %+v", i)
	}
	if !strings.HasPrefix(i.LastPrompt, "the last prompt of the idle session") || !strings.HasSuffix(i.LastPrompt, "…") ||
		len([]rune(i.LastPrompt)) > lastPromptRunes {
		t.Errorf("last prompt %q is not the trimmed last prompt", i.LastPrompt)
	}
	if fi, _ := os.Stat(idle.Path()); i.Size != fi.Size() {
		t.Errorf("size %d, want %d", i.Size, fi.Size())
	}
}

func TestOneLine(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"  a \n\t b  ", 10, "a b"},
		{"abcdef", 6, "abcdef"},
		{"abcdefg", 6, "abcde…"},
		{"ab  cdefg", 4, "ab…"},
		{"日本語のテキスト", 4, "日本語…"},
	} {
		if got := OneLine(tc.in, tc.max); got != tc.want {
			t.Errorf("OneLine(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}

// OneLine reads only what it shows, and shows what joining every field
// and cutting the result would.
func FuzzOneLine(f *testing.F) {
	for _, s := range []string{"", "a", " a  b\n c ", strings.Repeat("word ", 100), "é\xffx  y", strings.Repeat("x", 300)} {
		f.Add(s, 10)
		f.Add(s, 200)
	}
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 1 || max > 1000 {
			return
		}
		want := strings.Join(strings.Fields(s), " ")
		if r := []rune(want); len(r) > max {
			want = strings.TrimRight(string(r[:max-1]), " ") + "…"
		}
		if got := OneLine(s, max); got != want {
			t.Fatalf("OneLine(%q, %d) = %q, want %q", s, max, got, want)
		}
	})
}
