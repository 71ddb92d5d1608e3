package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestAppendRefusesAFileChangedByAnotherProgram changes the open session
// file behind the store's back in each way another program can; the next
// commit fails with one line naming the file, and nothing more is written
// (not to the file at the path, not to the file the store holds open).
func TestAppendRefusesAFileChangedByAnotherProgram(t *testing.T) {
	changes := map[string]struct {
		change func(t *testing.T, path string)
		reason string
	}{
		"truncated": {func(t *testing.T, path string) {
			if err := os.Truncate(path, 40); err != nil {
				t.Fatal(err)
			}
		}, "was truncated to 40 bytes"},
		"appended to": {func(t *testing.T, path string) {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(`{"junk":true}` + "\n")
			f.Close()
		}, "was appended to"},
		"replaced (cp + mv)": {func(t *testing.T, path string) {
			tmp := path + ".tmp"
			if err := os.WriteFile(tmp, readFile(t, path), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, path); err != nil {
				t.Fatal(err)
			}
		}, "was replaced by another file"},
		"replaced by a symlink": {func(t *testing.T, path string) {
			other := filepath.Join(t.TempDir(), "elsewhere")
			if err := os.WriteFile(other, readFile(t, path), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(other, path); err != nil {
				t.Fatal(err)
			}
		}, "was replaced by another file"},
		"removed": {func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}, "was removed or renamed"},
	}
	for name, c := range changes {
		t.Run(name, func(t *testing.T) {
			s := createStore(t, t.TempDir(), Options{Clock: newTestClock().Now})
			commitRun(t, s, "first")
			c.change(t, s.Path())
			atPath, _ := os.ReadFile(s.Path())
			held := heldBytes(t, s)

			r := newTestRun(t)
			for i := range 2 { // a second commit is refused the same way
				_, err := s.Commit(context.Background(), r.accept("second"))
				if !errors.Is(err, ErrTampered) {
					t.Fatalf("commit %d after the change: %v", i, err)
				}
				msg := err.Error()
				if !strings.Contains(msg, s.Path()) || !strings.Contains(msg, c.reason) || strings.Contains(msg, "\n") {
					t.Fatalf("error %q: want one line naming %s and %q", msg, s.Path(), c.reason)
				}
			}
			if now, _ := os.ReadFile(s.Path()); string(now) != string(atPath) {
				t.Fatalf("the file at the path changed:\n%q\nwas\n%q", now, atPath)
			}
			if now := heldBytes(t, s); string(now) != string(held) {
				t.Fatal("the held file was written to")
			}
			if st := s.State(); st.Facts != 6 {
				t.Fatalf("memory holds %d facts, want 6", st.Facts)
			}
		})
	}
}

// heldBytes reads the file the store holds open, wherever its path points.
func heldBytes(t *testing.T, s *Store) []byte {
	t.Helper()
	b, err := os.ReadFile("/proc/self/fd/" + strconv.Itoa(int(s.file.Fd())))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestAppendAfterUntouchedCommits(t *testing.T) {
	cwd := t.TempDir()
	s := createStore(t, cwd, Options{})
	for range 3 {
		commitRun(t, s, "again")
	}
	if st := s.State(); st.Facts != 18 {
		t.Fatalf("%d facts", st.Facts)
	}
}

// TestSessionsDirMustBePrivate refuses a .tiny-agent or sessions directory
// that others can write or another user owns, for create, open and list.
func TestSessionsDirMustBePrivate(t *testing.T) {
	for _, which := range []string{stateDirName, filepath.Join(stateDirName, sessionsDirName)} {
		for _, bad := range []string{"group-writable", "world-writable", "another user's"} {
			t.Run(which+" "+bad, func(t *testing.T) {
				cwd := t.TempDir()
				s := createStore(t, cwd, Options{})
				id := s.ID()
				s.Close()
				dir := filepath.Join(cwd, which)
				want := "writable by other users"
				switch bad {
				case "group-writable":
					os.Chmod(dir, 0o770)
				case "world-writable":
					os.Chmod(dir, 0o777)
				default:
					if os.Geteuid() != 0 {
						t.Skip("changing a directory's owner needs root")
					}
					if err := os.Chown(dir, 65534, 65534); err != nil {
						t.Fatal(err)
					}
					want = "owned by another user (uid 65534)"
				}
				check := func(what string, err error) {
					t.Helper()
					if err == nil || !strings.Contains(err.Error(), dir+" is "+want) || !strings.Contains(err.Error(), "refusing to use it") {
						t.Errorf("%s: %v, want a refusal naming %s", what, err, dir)
					}
				}
				_, err := Create(cwd, testHeader(), Options{})
				check("create", err)
				_, err = Open(cwd, id, Options{})
				check("open", err)
				_, err = List(cwd)
				check("list", err)
				_, _, err = ReadByID(cwd, id)
				check("read", err)
			})
		}
	}
}

// BenchmarkCheckFile is the cost the check adds to every commit (an fstat
// and an lstat).
func BenchmarkCheckFile(b *testing.B) {
	s := createStore(b, b.TempDir(), Options{})
	for b.Loop() {
		if err := s.checkFile(); err != nil {
			b.Fatal(err)
		}
	}
}
