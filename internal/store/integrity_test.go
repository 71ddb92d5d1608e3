package store

import (
	"bytes"
	"context"
	"errors"
	"github.com/tiny-agent/tiny-go/internal/statekey"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// forge rewrites the session file in place, same length, as a command
// with write access could: "content":"run" becomes "content":"pwn".
func forge(t testing.TB, path, from, to string) int {
	t.Helper()
	data := readFile(t, path)
	i := bytes.Index(data, []byte(from))
	if i < 0 || len(from) != len(to) {
		t.Fatalf("cannot forge %q", from)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte(to), int64(i)); err != nil {
		t.Fatal(err)
	}
	return bytes.Count(data[:i], []byte{'\n'}) + 1
}

// A same-length rewrite of a committed line while the store is open stops
// the next commit, naming the line; nothing more is written, and the mark
// it leaves keeps the next open from adopting the forgery.
func TestInPlaceForgeryDuringARun(t *testing.T) {
	cwd := t.TempDir()
	s := createStore(t, cwd, Options{})
	commitRun(t, s, "run")
	r := newTestRun(t)
	commit(t, s, r.accept("second"))
	line := forge(t, s.Path(), `"content":"run"`, `"content":"pwn"`)
	before := readFile(t, s.Path())
	_, err := s.Commit(context.Background(), r.request())
	if !errors.Is(err, ErrTampered) || !strings.Contains(err.Error(), "rewritten in place") || !strings.Contains(err.Error(), "line "+strconv.Itoa(line)) {
		t.Fatalf("commit after forgery: %v (forged line %d)", err, line)
	}
	if !bytes.Equal(readFile(t, s.Path()), before) {
		t.Fatal("the store wrote to a forged file")
	}
	s.Close()
	_, err = Open(cwd, s.ID(), Options{})
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Corruption.Code != CorruptDigestMismatch || ce.Corruption.Line != line {
		t.Fatalf("open after forgery: %v", err)
	}
}

// Touching the file (times only) is no forgery: the digest confirms the
// bytes and the run goes on.
func TestTouchIsNotTampering(t *testing.T) {
	s := createStore(t, t.TempDir(), Options{})
	commitRun(t, s, "run")
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(s.Path(), later, later); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(s.Path(), 0o600); err != nil {
		t.Fatal(err)
	}
	commitRun(t, s, "again")
}

// Between runs: an in-place forgery, a cut at a line boundary and each of
// 300 random single-bit flips are refused when the session is opened,
// naming the first line that differs; none changes the state unseen.
func TestOpenVerifiesTheCommittedPrefix(t *testing.T) {
	cwd := t.TempDir()
	s := createStore(t, cwd, Options{})
	for range 4 {
		commitRun(t, s, "run")
	}
	s.Close()
	orig := readFile(t, s.Path())
	restore := func() {
		if err := os.WriteFile(s.Path(), orig, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	open := func() error {
		s2, err := Open(cwd, s.ID(), Options{})
		if err == nil {
			s2.Close()
		}
		return err
	}
	if err := open(); err != nil {
		t.Fatalf("untouched session: %v", err)
	}

	line := forge(t, s.Path(), `"content":"run"`, `"content":"pwn"`)
	var ce *CorruptError
	if err := open(); !errors.As(err, &ce) || ce.Corruption.Code != CorruptDigestMismatch || ce.Corruption.Line != line {
		t.Fatalf("forged line %d: %v", line, err)
	}
	restore()

	lines := bytes.SplitAfter(orig, []byte{'\n'})
	cut := len(orig) - len(lines[len(lines)-2])
	if err := os.WriteFile(s.Path(), orig[:cut], 0o600); err != nil {
		t.Fatal(err)
	}
	if err := open(); !errors.As(err, &ce) || ce.Corruption.Code != CorruptTruncated {
		t.Fatalf("truncated at a line boundary: %v", err)
	}
	restore()

	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		flipped := bytes.Clone(orig)
		at := rng.IntN(len(flipped))
		flipped[at] ^= 1 << rng.IntN(8)
		if err := os.WriteFile(s.Path(), flipped, 0o600); err != nil {
			t.Fatal(err)
		}
		err := open()
		if err == nil {
			t.Fatalf("flip %d (byte %d) went unseen", i, at)
		}
		if errors.As(err, &ce) && ce.Corruption.Code == CorruptDigestMismatch && ce.Corruption.Line != lineAt(orig, int64(at)) {
			t.Fatalf("flip at byte %d (line %d) reported at line %d", at, lineAt(orig, int64(at)), ce.Corruption.Line)
		}
	}
	restore()
	if err := open(); err != nil {
		t.Fatal(err)
	}
}

// Lines another runtime appended (valid, after tiny-go's last record) are
// adopted, and from then on protected like tiny-go's own.
func TestValidAppendIsAdopted(t *testing.T) {
	cwd := t.TempDir()
	s := createStore(t, cwd, Options{})
	commitRun(t, s, "run")
	s.Close()
	// Another writer: the same store code without the records file.
	dropAll := func() []byte {
		dir, _ := SidecarDir(s.Path(), false)
		p := filepath.Join(dir, IntegrityFile)
		b := readFile(t, p)
		return b
	}
	recs := dropAll()
	mark, _, _ := statekey.Marked(sealedKind, filepath.Base(s.Path()))
	s2, err := Open(cwd, s.ID(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	commitRun(t, s2, "other runtime")
	s2.Close()
	dir, _ := SidecarDir(s.Path(), false)
	if err := os.WriteFile(filepath.Join(dir, IntegrityFile), recs, 0o600); err != nil {
		t.Fatal(err)
	}
	// Another runtime does not touch tiny-go's mark beside its key.
	statekey.Mark(sealedKind, filepath.Base(s.Path()), mark)
	s3, err := Open(cwd, s.ID(), Options{})
	if err != nil {
		t.Fatalf("open with a valid append: %v", err)
	}
	s3.Close()
	forge(t, s.Path(), `"content":"other runtime"`, `"content":"other-runtime"`)
	var ce *CorruptError
	if _, err := Open(cwd, s.ID(), Options{}); !errors.As(err, &ce) || ce.Corruption.Code != CorruptDigestMismatch {
		t.Fatalf("the adopted line is not protected: %v", err)
	}
}

// session repair round trips: a forgery, an append by a command during a
// run and a junk line are cut back to the last verified commit, the cut
// bytes are kept, and the session opens and takes commits again; a
// truncation is refused, and a verified session has nothing to repair.
func TestRepairRoundTrips(t *testing.T) {
	cases := map[string]func(t *testing.T, s *Store) (cutFrom int){
		"forgery": func(t *testing.T, s *Store) int {
			s.Close()
			return forge(t, s.Path(), `"content":"second"`, `"content":"SECOND"`)
		},
		"append by a command during a run": func(t *testing.T, s *Store) int {
			n := bytes.Count(readFile(t, s.Path()), []byte{'\n'}) + 1
			f, _ := os.OpenFile(s.Path(), os.O_WRONLY|os.O_APPEND, 0)
			f.WriteString(`{"seq":99}` + "\n")
			f.Close()
			if err := commitErr(t, s); !errors.Is(err, ErrTampered) {
				t.Fatalf("commit after append: %v", err)
			}
			s.Close()
			return n
		},
		"junk line": func(t *testing.T, s *Store) int {
			s.Close()
			n := bytes.Count(readFile(t, s.Path()), []byte{'\n'}) + 1
			f, _ := os.OpenFile(s.Path(), os.O_WRONLY|os.O_APPEND, 0)
			f.WriteString("not json\n")
			f.Close()
			return n
		},
	}
	for name, damage := range cases {
		t.Run(name, func(t *testing.T) {
			cwd := t.TempDir()
			s := createStore(t, cwd, Options{})
			commitRun(t, s, "first")
			good := readFile(t, s.Path())
			commitRun(t, s, "second")
			from := damage(t, s)
			damaged := readFile(t, s.Path())
			if _, err := Open(cwd, s.ID(), Options{}); err == nil {
				t.Fatal("the damaged session opens")
			}
			r, err := RepairFile(s.Path(), time.Now())
			if err != nil {
				t.Fatal(err)
			}
			kept := readFile(t, s.Path())
			if name == "forgery" {
				if !bytes.Equal(kept, good) {
					t.Fatalf("kept %d bytes, want the %d before the forged line", len(kept), len(good))
				}
			} else if !bytes.HasPrefix(damaged, kept) || int64(len(kept)) != r.Kept || len(kept) < len(good) {
				t.Fatalf("kept %d bytes", len(kept))
			}
			if r.FirstLine != from && name != "forgery" {
				t.Fatalf("removed from line %d, want %d", r.FirstLine, from)
			}
			if cut := readFile(t, r.Backup); !bytes.Equal(append(bytes.Clone(kept), cut...), damaged) {
				t.Fatal("the backup does not hold the cut bytes")
			}
			s2, err := Open(cwd, s.ID(), Options{})
			if err != nil {
				t.Fatalf("open after repair: %v", err)
			}
			commitRun(t, s2, "after repair")
			s2.Close()
			if _, err := RepairFile(s.Path(), time.Now()); !errors.Is(err, ErrNothingToRepair) {
				t.Fatalf("second repair: %v", err)
			}
		})
	}
	t.Run("truncation", func(t *testing.T) {
		cwd := t.TempDir()
		s := createStore(t, cwd, Options{})
		commitRun(t, s, "first")
		good := readFile(t, s.Path())
		commitRun(t, s, "second")
		s.Close()
		if err := os.WriteFile(s.Path(), good, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := RepairFile(s.Path(), time.Now()); err == nil || !strings.Contains(err.Error(), "cannot be restored") {
			t.Fatalf("repair of a truncated session: %v", err)
		}
	})
}

func commitErr(t *testing.T, s *Store) error {
	r := newTestRun(t)
	_, err := s.Commit(context.Background(), r.accept("x"))
	return err
}
