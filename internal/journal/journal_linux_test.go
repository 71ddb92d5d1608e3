//go:build linux && (amd64 || arm64)

package journal

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestMain(m *testing.M) {
	ChildMain()
	if os.Getenv("TINY_JOURNAL_TEST_SUPERVISE") != "" {
		superviseChild()
	}
	if os.Getenv("TINY_JOURNAL_TEST_RESTORE") != "" {
		restoreChild()
	}
	os.Exit(m.Run())
}

// entry is what a tree's exact state holds of one name.
type entry struct {
	Mode       fs.FileMode
	Size       int64
	Mtime      int64
	Ino, Nlink uint64
	UID        uint32
	Sum        string // content hash or link target
}

func snapshot(t *testing.T, root string) map[string]entry {
	t.Helper()
	out := map[string]entry{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		st := info.Sys().(*syscall.Stat_t)
		e := entry{Mode: info.Mode(), Mtime: st.Mtim.Nano(), Ino: st.Ino, Nlink: uint64(st.Nlink), UID: st.Uid}
		switch {
		case info.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			e.Size, e.Sum = info.Size(), fmt.Sprintf("%x", sha256.Sum256(b))
		case info.Mode()&fs.ModeSymlink != 0:
			e.Sum, _ = os.Readlink(p)
		}
		out[strings.TrimPrefix(p, root)] = e
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, want, got map[string]entry) {
	t.Helper()
	for p, w := range want {
		if g, ok := got[p]; !ok {
			t.Errorf("%q missing after Restore", p)
		} else if g != w {
			t.Errorf("%q after Restore: %+v, want %+v", p, g, w)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%q left after Restore", p)
		}
	}
}

// fixture is a tree and a journal directory beside it, on one file system.
func fixture(t *testing.T) (tree, jdir string) {
	base := t.TempDir()
	tree, jdir = filepath.Join(base, "tree"), filepath.Join(base, "journal")
	if err := os.Mkdir(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	return tree, jdir
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// run runs script in bash under the journal and returns its output.
func run(t *testing.T, tree, jdir, script string) string {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bash, "-c", script)
	cmd.Dir = tree
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	s, err := Start(cmd, tree, jdir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Wait(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out.String())
	}
	return out.String()
}

// roundTrip runs script under the journal, lets check look at the changed
// tree, then restores and wants the tree as before, inode for inode.
func roundTrip(t *testing.T, tree, jdir, script string, check func()) {
	t.Helper()
	before := snapshot(t, tree)
	run(t, tree, jdir, script)
	if check != nil {
		check()
	}
	if err := Restore(jdir); err != nil {
		t.Fatal(err)
	}
	sameTree(t, before, snapshot(t, tree))
}

func wantFile(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || string(b) != want {
		t.Errorf("%s = %q, %v; want %q", path, b, err, want)
	}
}

func keptBytes(t *testing.T, jdir string) int64 {
	var n int64
	_ = filepath.WalkDir(jdir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

func TestAppendKeepsOnlyTheLength(t *testing.T) {
	tree, jdir := fixture(t)
	big := strings.Repeat("x", 1<<20)
	write(t, filepath.Join(tree, "big.log"), big)
	roundTrip(t, tree, jdir, "echo line >> big.log", func() {
		wantFile(t, filepath.Join(tree, "big.log"), big+"line\n")
		if n := keptBytes(t, jdir); n > 4096 {
			t.Errorf("the journal keeps %d bytes for an append, want only a record", n)
		}
	})
}

func TestTruncateAndWrite(t *testing.T) {
	tree, jdir := fixture(t)
	write(t, filepath.Join(tree, "f"), "old content")
	write(t, filepath.Join(tree, "sub/g"), "g")
	roundTrip(t, tree, jdir, "printf new > f; : > sub/g; printf created > sub/h; truncate -s 2 f", func() {
		wantFile(t, filepath.Join(tree, "f"), "ne")
		wantFile(t, filepath.Join(tree, "sub/h"), "created")
	})
}

func TestInPlaceUpdate(t *testing.T) {
	tree, jdir := fixture(t)
	write(t, filepath.Join(tree, "data.bin"), strings.Repeat("0123456789", 1000))
	script := `python3 -c '
f = open("data.bin", "r+b"); f.seek(5); f.write(b"ABC"); f.close()
g = open("data.bin", "r+b"); g.read(3); g.close()'`
	roundTrip(t, tree, jdir, script, func() {
		b, _ := os.ReadFile(filepath.Join(tree, "data.bin"))
		if string(b[:10]) != "01234ABC89" {
			t.Errorf("data.bin starts %q", b[:10])
		}
	})
}

func TestSqliteUpdate(t *testing.T) {
	sqlite, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Fatal("sqlite3 is needed (apt-get install sqlite3)")
	}
	tree, jdir := fixture(t)
	db := filepath.Join(tree, "app.db")
	if out, err := exec.Command(sqlite, db, "create table t(id integer primary key, v text); insert into t values (1,'a'),(2,'b');").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	roundTrip(t, tree, jdir, "sqlite3 app.db \"update t set v='z' where id=1\" && sqlite3 app.db 'select v from t where id=1'", func() {
		out, _ := exec.Command(sqlite, db, "select v from t order by id").Output()
		if string(out) != "z\nb\n" {
			t.Errorf("after the update: %q", out)
		}
	})
}

func TestRenameDirectoryAndReplace(t *testing.T) {
	tree, jdir := fixture(t)
	write(t, filepath.Join(tree, "dir/a/b"), "b")
	write(t, filepath.Join(tree, "dir/c"), "c")
	write(t, filepath.Join(tree, "target"), "replaced")
	write(t, filepath.Join(tree, "src"), "mover")
	roundTrip(t, tree, jdir, "mv dir moved && mv src target && mv moved/c moved/a/", func() {
		wantFile(t, filepath.Join(tree, "moved/a/c"), "c")
		wantFile(t, filepath.Join(tree, "target"), "mover")
	})
}

func TestHardLinksUnlinkMkdirChmod(t *testing.T) {
	tree, jdir := fixture(t)
	write(t, filepath.Join(tree, "a"), "shared")
	if err := os.Link(filepath.Join(tree, "a"), filepath.Join(tree, "b")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(tree, "gone"), "gone")
	write(t, filepath.Join(tree, "empty/.keep"), "")
	if err := os.Symlink("a", filepath.Join(tree, "link")); err != nil {
		t.Fatal(err)
	}
	script := "echo more >> a && ln a c && rm b gone link empty/.keep && rmdir empty && " +
		"mkdir -p new/deep && chmod 600 a && touch -d 2001-01-01 c && ln -s c newlink && sed -i s/shared/SHARED/ c"
	roundTrip(t, tree, jdir, script, func() {
		if _, err := os.Stat(filepath.Join(tree, "gone")); err == nil {
			t.Error("rm did not remove gone")
		}
		wantFile(t, filepath.Join(tree, "c"), "SHAREDmore\n")
	})
}

// /dev/fd and /proc/self name the command's own fds, not the supervisor's.
func TestOwnFdNamesAreTheCommands(t *testing.T) {
	tree, jdir := fixture(t)
	write(t, filepath.Join(tree, "out.txt"), "original")
	roundTrip(t, tree, jdir, "exec 3>>out.txt; echo over > /dev/fd/3; echo more > /proc/self/fd/3", func() {
		wantFile(t, filepath.Join(tree, "out.txt"), "more\n")
	})
}

// renameat2(RENAME_EXCHANGE) swaps two names; Restore swaps them back.
func TestRenameExchange(t *testing.T) {
	tree, jdir := fixture(t)
	write(t, filepath.Join(tree, "a"), "A")
	write(t, filepath.Join(tree, "dir/b"), "B")
	script := `python3 -c '
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
if libc.renameat2(-100, b"a", -100, b"dir/b", 2) != 0:
    raise OSError(ctypes.get_errno(), "renameat2")'`
	roundTrip(t, tree, jdir, script, func() {
		wantFile(t, filepath.Join(tree, "a"), "B")
		wantFile(t, filepath.Join(tree, "dir/b"), "A")
	})
}

// An append open keeps only the length, until the fd may write elsewhere:
// F_SETFL dropping O_APPEND, or a shrink, keeps the whole file first.
func TestAppendFdThatWritesElsewhere(t *testing.T) {
	for name, script := range map[string]string{
		"setfl": `python3 -c '
import fcntl, os
fd = os.open("log", os.O_WRONLY | os.O_APPEND)
fcntl.fcntl(fd, fcntl.F_SETFL, 0)
os.lseek(fd, 0, 0); os.write(fd, b"OVER")'`,
		"ftruncate": `python3 -c '
import os
fd = os.open("log", os.O_WRONLY | os.O_APPEND)
os.ftruncate(fd, 2); os.write(fd, b"END")'`,
	} {
		t.Run(name, func(t *testing.T) {
			tree, jdir := fixture(t)
			write(t, filepath.Join(tree, "log"), "line one\n")
			roundTrip(t, tree, jdir, script, func() {
				b, _ := os.ReadFile(filepath.Join(tree, "log"))
				if string(b) == "line one\n" {
					t.Error("the command's write did not land")
				}
			})
		})
	}
}

// git's lock files, renames, loose objects and ref deletions come back.
func TestGitCommitIsRestored(t *testing.T) {
	tree, jdir := fixture(t)
	git := "git -c user.name=t -c user.email=t@t -c init.defaultBranch=main -c gc.auto=0 "
	seed := exec.Command("bash", "-c", git+"init -q && echo a > a && "+git+"add a && "+git+"commit -qm a && "+git+"branch old")
	seed.Dir = tree
	if out, err := seed.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	roundTrip(t, tree, jdir, "echo b > b && "+git+"add b && "+git+"commit -qm b && "+git+"branch -D old && "+git+"reset -q --hard HEAD~1", func() {
		out, _ := exec.Command("git", "-C", tree, "branch", "--list").Output()
		if strings.Contains(string(out), "old") {
			t.Errorf("branch -D did not delete: %q", out)
		}
	})
}

// A file the command makes and removes is not kept; a name made, moved
// away, then taken by a file from before is (its name is no longer fresh).
func TestFreshNamesKeepNothing(t *testing.T) {
	tree, jdir := fixture(t)
	write(t, filepath.Join(tree, "old/f"), "from before")
	write(t, filepath.Join(tree, "target"), "target before")
	script := "head -c 5000000 /dev/zero > tmp.bin && mv tmp.bin tmp2.bin && rm tmp2.bin && " +
		"head -c 3000000 /dev/zero > out && head -c 3000000 /dev/zero > out.tmp && mv out.tmp out && rm out && " +
		"mkdir n && echo made > n/f && mv n m && mv old n && rm n/f && " +
		"echo new > t.tmp && mv t.tmp target && rm target"
	roundTrip(t, tree, jdir, script, func() {
		if n := keptBytes(t, jdir); n > 64<<10 {
			t.Errorf("the journal keeps %d bytes for files the command made and removed", n)
		}
	})
}
