package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// A journal cuts off the line a crash tore before it appends, so every
// line it wrote stands whole; concurrent appends never interleave.
func TestJournalCutsATornTailAndKeepsLinesWhole(t *testing.T) {
	s, err := Create(t.TempDir(), testHeader(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	session := s.Path()
	dir, err := SidecarDir(session, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "j.jsonl"), []byte("{\"a\":1}\n{\"torn\":"), 0o600); err != nil {
		t.Fatal(err)
	}
	j := NewJournal(session, "j.jsonl", true)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := j.Append([]byte(fmt.Sprintf("{\"n\":%d,\"pad\":%q}\n", i, strings.Repeat("x", 5000)))); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := ReadSidecarFile(session, "j.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 21 || lines[0] != `{"a":1}` || strings.Contains(string(data), "torn") {
		t.Fatalf("%d lines; first %q", len(lines), lines[0])
	}
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, `{"n":`) || !strings.HasSuffix(l, `"}`) || len(l) < 5000 {
			t.Fatalf("a line is not whole: %.40q", l)
		}
	}
}

// Nothing is created until the first line.
func TestJournalCreatesNothingUntilAppend(t *testing.T) {
	s, err := Create(t.TempDir(), testHeader(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	j := NewJournal(s.Path(), "j.jsonl", false)
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if dir, err := SidecarDir(s.Path(), false); err == nil {
		t.Fatalf("a journal never appended to made %s", dir)
	}
}
