package store

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/tiny-agent/tiny-go/internal/statekey"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The helper process: when TINY_STORE_HELPER=lock is set, the test binary
// opens the session named by the environment, says "locked", and holds
// the lock until its stdin closes.
func init() {
	if os.Getenv("TINY_STORE_HELPER") != "lock" {
		return
	}
	s, err := Open(os.Getenv("TINY_STORE_CWD"), os.Getenv("TINY_STORE_ID"), Options{})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(3)
	}
	fmt.Println("locked")
	bufio.NewReader(os.Stdin).ReadString('\n')
	s.Close()
	os.Exit(0)
}

func TestLockAcrossProcesses(t *testing.T) {
	cwd := t.TempDir()
	s, err := Create(cwd, testHeader(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	id := s.ID()
	s.Close()

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "TINY_STORE_HELPER=lock", "TINY_STORE_CWD="+cwd, "TINY_STORE_ID="+id)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("helper said %q, %v", line, err)
	}

	_, err = Open(cwd, id, Options{})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("open while another process holds it: %v, want ErrLocked", err)
	}
	if want := "session " + id + " is open in another process"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}

	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
	s2, err := Open(cwd, id, Options{})
	if err != nil {
		t.Fatalf("open after the other process exited: %v", err)
	}
	s2.Close()
}

func TestLockWithinProcess(t *testing.T) {
	cwd := t.TempDir()
	s := createStore(t, cwd, Options{})
	if _, err := Open(cwd, s.ID(), Options{}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second open: %v, want ErrLocked", err)
	}
	if _, err := OpenFile(s.Path(), Options{}); !errors.Is(err, ErrLocked) {
		t.Fatalf("second OpenFile: %v, want ErrLocked", err)
	}
}

func TestOpenRefusesSymlinks(t *testing.T) {
	t.Run("session file", func(t *testing.T) {
		cwd := t.TempDir()
		s := createStore(t, cwd, Options{})
		s.Close()
		real := filepath.Join(t.TempDir(), "real.jsonl")
		if err := os.Rename(s.Path(), real); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(real, s.Path()); err != nil {
			t.Fatal(err)
		}
		_, err := Open(cwd, s.ID(), Options{})
		if err == nil || !strings.Contains(err.Error(), "symlink") {
			t.Fatalf("open through a symlinked file: %v", err)
		}
		if _, err := OpenFile(s.Path(), Options{}); err == nil || !strings.Contains(err.Error(), "symlink") {
			t.Fatalf("OpenFile through a symlink: %v", err)
		}
		if _, _, err := ReadByID(cwd, s.ID()); err == nil {
			t.Fatal("ReadByID followed a symlink")
		}
	})
	for _, component := range []string{".tiny-agent", ".tiny-agent/sessions"} {
		t.Run("directory "+component, func(t *testing.T) {
			cwd := t.TempDir()
			s := createStore(t, cwd, Options{})
			s.Close()
			elsewhere := filepath.Join(t.TempDir(), "moved")
			if err := os.Rename(filepath.Join(cwd, component), elsewhere); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(elsewhere, filepath.Join(cwd, component)); err != nil {
				t.Fatal(err)
			}
			_, err := Open(cwd, s.ID(), Options{})
			if err == nil || !strings.Contains(err.Error(), "symlinks are refused") {
				t.Fatalf("open through a symlinked %s: %v", component, err)
			}
			if _, err := Create(cwd, testHeader(), Options{}); err == nil {
				t.Fatalf("create through a symlinked %s succeeded", component)
			}
		})
	}
}

func TestOpenRejectsBadIDs(t *testing.T) {
	cwd := t.TempDir()
	createStore(t, cwd, Options{}).Close()
	for _, id := range []string{"", "../x", "018f0000-0000-4000-8000-000000000001", "018F0000-0000-7000-8000-000000000001"} {
		if _, err := Open(cwd, id, Options{}); err == nil {
			t.Errorf("Open(%q) succeeded", id)
		}
	}
	if _, err := Open(cwd, "018f0000-0000-7000-8000-000000000001", Options{}); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("open of a missing session: %v", err)
	}
}

func TestOpenHeaderIDMismatch(t *testing.T) {
	cwd := t.TempDir()
	s := createStore(t, cwd, Options{})
	s.Close()
	other := "018f0000-0000-7000-8000-0000000000ff"
	renamed := filepath.Join(SessionsDir(cwd), "2026-01-01T00-00-00-000Z_"+other+".jsonl")
	if err := os.Rename(s.Path(), renamed); err != nil {
		t.Fatal(err)
	}
	_, err := Open(cwd, other, Options{})
	if err == nil || !strings.Contains(err.Error(), "does not match the file name") {
		t.Fatalf("open with a foreign header id: %v", err)
	}
	if _, err := OpenFile(renamed, Options{}); err == nil {
		t.Fatal("OpenFile with a foreign header id succeeded")
	}
}

func TestOpenRefusesCorruptSession(t *testing.T) {
	cwd := t.TempDir()
	s := createStore(t, cwd, Options{})
	commitRun(t, s, "first")
	s.Close()
	data := readFile(t, s.Path())
	// A complete but invalid line, then a torn tail: neither is touched.
	corrupt := append(append([]byte{}, data...), []byte("{\"kind\":\"entry\"}\n{\"torn")...)
	if err := os.WriteFile(s.Path(), corrupt, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(cwd, s.ID(), Options{})
	var ce *CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("open corrupt session: %v, want a CorruptError", err)
	}
	if want := fmt.Sprintf("%s at line 5", ce.Corruption.Code); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name %q", err, want)
	}
	if got := readFile(t, s.Path()); !bytes.Equal(got, corrupt) {
		t.Error("a corrupt session was modified by Open")
	}
}

// dropLastRecord removes the last integrity record of the session at
// path, as a crash between the append of a line and its record leaves it.
func dropLastRecord(t testing.TB, path string) {
	t.Helper()
	dir, err := SidecarDir(path, false)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, IntegrityFile)
	recs := readFile(t, p)
	recs = recs[:bytes.LastIndexByte(recs[:len(recs)-1], '\n')+1]
	if err := os.WriteFile(p, recs, 0o600); err != nil {
		t.Fatal(err)
	}
	// A crash leaves the mark beside the key as the run before left it:
	// it never vouches for more than the records.
	unmark(t, path)
}

// unmark forgets the mark of the session at path (as before any close).
func unmark(t testing.TB, path string) {
	t.Helper()
	if err := statekey.Mark(sealedKind, filepath.Base(path), nil); err != nil {
		t.Fatal(err)
	}
}

// TestTornTailRepair cuts a real session inside its last transaction at
// every byte offset; Open must repair to the previous line and reduce to
// the previous state, and the next commit must land cleanly.
func TestTornTailRepair(t *testing.T) {
	cwd := t.TempDir()
	s := createStore(t, cwd, Options{})
	commitRun(t, s, "first")
	r := newTestRun(t)
	commit(t, s, r.accept("second"))
	commit(t, s, r.request())
	prevState := printed(t, s.State())
	prevLen := s.State().RepairedLength
	commit(t, s, r.reply("the last transaction, with several facts"))
	s.Close()
	// A crash inside the append comes before the line's integrity record.
	dropLastRecord(t, s.Path())
	full := readFile(t, s.Path())
	if int64(len(full)) <= prevLen+1 {
		t.Fatal("last transaction too short")
	}
	for off := prevLen + 1; off < int64(len(full)); off++ {
		if err := os.WriteFile(s.Path(), full[:off], 0o600); err != nil {
			t.Fatal(err)
		}
		s2, err := Open(cwd, s.ID(), Options{})
		if err != nil {
			t.Fatalf("offset %d: open: %v", off, err)
		}
		if got := printed(t, s2.State()); got != prevState {
			t.Fatalf("offset %d: state after repair differs from the previous state", off)
		}
		if fi, _ := os.Stat(s.Path()); fi.Size() != prevLen {
			t.Fatalf("offset %d: file is %d bytes after repair, want %d", off, fi.Size(), prevLen)
		}
		s2.Close()
	}
	// After a repair the next commit starts on a fresh line.
	if err := os.WriteFile(s.Path(), full[:len(full)-1], 0o600); err != nil {
		t.Fatal(err)
	}
	s3, err := Open(cwd, s.ID(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s3.Close()
	commit(t, s3, r.reply("again"))
	if got, want := printed(t, s3.State()), printed(t, reduceFile(t, s.Path())); got != want {
		t.Error("memory and file disagree after repair and commit")
	}
}

// countingSink counts syncs of the file.
type countingSink struct {
	sink
	syncs int
}

func (c *countingSink) Sync() error { c.syncs++; return c.sink.Sync() }

func TestFsyncMode(t *testing.T) {
	for _, fsync := range []bool{false, true} {
		t.Run(fmt.Sprint("fsync=", fsync), func(t *testing.T) {
			cwd := t.TempDir()
			cs := &countingSink{}
			dirSyncs := 0
			opts := Options{Fsync: fsync, wrapSink: func(f sink) sink { cs.sink = f; return cs }, dirSynced: func() { dirSyncs++ }}
			s, err := Create(cwd, testHeader(), opts)
			if err != nil {
				t.Fatal(err)
			}
			commitRun(t, s, "one")
			wantFile, wantDir := 0, 0
			if fsync {
				wantFile, wantDir = 1+3, 1 // header + three commits; directory after create
			}
			if cs.syncs != wantFile || dirSyncs != wantDir {
				t.Errorf("after create and 3 commits: %d file syncs, %d directory syncs; want %d, %d", cs.syncs, dirSyncs, wantFile, wantDir)
			}
			s.Close()

			// Reopening a clean file repairs nothing and syncs nothing.
			cs2 := &countingSink{}
			dirSyncs = 0
			opts.wrapSink = func(f sink) sink { cs2.sink = f; return cs2 }
			s, err = Open(cwd, s.ID(), opts)
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			if cs2.syncs != 0 || dirSyncs != 0 {
				t.Errorf("clean reopen synced: %d file, %d directory", cs2.syncs, dirSyncs)
			}

			// A torn tail is repaired, and in fsync mode made durable.
			f, err := os.OpenFile(s.Path(), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(`{"torn":`)
			f.Close()
			s, err = Open(cwd, s.ID(), opts)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			wantFile, wantDir = 0, 0
			if fsync {
				wantFile, wantDir = 1, 1
			}
			if cs2.syncs != wantFile || dirSyncs != wantDir {
				t.Errorf("repair: %d file syncs, %d directory syncs; want %d, %d", cs2.syncs, dirSyncs, wantFile, wantDir)
			}
			commit(t, s, newTestRun(t).accept("two"))
			if fsync && cs2.syncs != 2 {
				t.Errorf("commit after repair: %d file syncs, want 2", cs2.syncs)
			}
			if _, err := s.Commit(context.Background(), nil); err == nil {
				t.Error("empty commit accepted")
			}
		})
	}
}
