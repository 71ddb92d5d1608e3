package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// unsealedRecords recomputes the integrity records of the session at
// path as any program can: the SHA-256 of each line-ending prefix, in
// the format of before the records were sealed.
func unsealedRecords(t *testing.T, path string, keepFirst int) []byte {
	t.Helper()
	data := readFile(t, path)
	var out []byte
	for i, n := 0, 0; i < len(data); i++ {
		if data[i] != '\n' {
			continue
		}
		n++
		if n <= keepFirst {
			continue
		}
		sum := sha256.Sum256(data[:i+1])
		out = fmt.Appendf(out, "%d %s\n", i+1, hex.EncodeToString(sum[:]))
	}
	return out
}

func writeRecords(t *testing.T, path string, recs []byte) {
	t.Helper()
	dir, err := SidecarDir(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, IntegrityFile), recs, 0o600); err != nil {
		t.Fatal(err)
	}
}

func wantCorrupt(t *testing.T, err error, code string) {
	t.Helper()
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Corruption.Code != code {
		t.Fatalf("want %s, got %v", code, err)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Fatalf("not one line: %q", err)
	}
}

// Attacks on the integrity records of a session tiny-go sealed: a
// rewritten line with the records recomputed without the key
// ("integrity-recomputed"), a record with a made-up seal
// ("integrity-forged-seal"), and the sealed records cut back to the
// header so the rest passes for another runtime's append
// ("integrity-cut-back"). Each is refused; `session verify` says the same
// (the check is NewIntegrityCheck's).
func TestSealedRecordsCannotBeForged(t *testing.T) {
	attacks := map[string]struct {
		code  string
		forge func(t *testing.T, path string)
	}{
		"integrity-recomputed": {CorruptUnsealed, func(t *testing.T, path string) {
			writeRecords(t, path, unsealedRecords(t, path, 0))
		}},
		"integrity-forged-seal": {CorruptDigestMismatch, func(t *testing.T, path string) {
			recs := unsealedRecords(t, path, 0)
			recs = bytes.ReplaceAll(recs, []byte("\n"), []byte(" "+strings.Repeat("ab", 32)+"\n"))
			writeRecords(t, path, recs)
		}},
		"integrity-cut-back": {CorruptUnsealed, func(t *testing.T, path string) {
			dir, _ := SidecarDir(path, false)
			recs := readFile(t, filepath.Join(dir, IntegrityFile))
			writeRecords(t, path, recs[:bytes.IndexByte(recs, '\n')+1])
		}},
	}
	for name, a := range attacks {
		t.Run(name, func(t *testing.T) {
			cwd := t.TempDir()
			s := createStore(t, cwd, Options{})
			commitRun(t, s, "work")
			commitRun(t, s, "more")
			s.Close()
			forge(t, s.Path(), `"content":"more"`, `"content":"pwnd"`)
			a.forge(t, s.Path())
			_, err := Open(cwd, s.ID(), Options{})
			wantCorrupt(t, err, a.code)
		})
	}
}

// Migration: a session whose records predate the seal (no mark beside
// the key, records of two fields) opens with one line saying they were
// not trusted; its records are sealed from then on, and the next open
// says nothing.
func TestUnsealedRecordsOfBeforeAreOneLine(t *testing.T) {
	cwd := t.TempDir()
	s := createStore(t, cwd, Options{})
	commitRun(t, s, "work")
	s.Close()
	writeRecords(t, s.Path(), unsealedRecords(t, s.Path(), 0))
	os.Remove(markOf(t, s.Path()))
	s2, err := Open(cwd, s.ID(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if w := s2.IntegrityWarning(); !strings.Contains(w, "carry no seal") || strings.Contains(w, "\n") {
		t.Fatalf("warning %q", w)
	}
	commitRun(t, s2, "more")
	s2.Close()
	s3, err := Open(cwd, s.ID(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if w := s3.IntegrityWarning(); w != "" {
		t.Fatalf("said again: %q", w)
	}
	s3.Close()
	forge(t, s.Path(), `"content":"more"`, `"content":"pwnd"`)
	_, err = Open(cwd, s.ID(), Options{})
	wantCorrupt(t, err, CorruptDigestMismatch)
}

func markOf(t *testing.T, path string) string {
	_, ok, p := statekeyMarked(path)
	if !ok {
		t.Fatal("no mark for a sealed session")
	}
	return p
}
