//go:build linux && (amd64 || arm64)

package journal

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func bigFile(t *testing.T, path string, size int) {
	t.Helper()
	b := make([]byte, size)
	for i := range b {
		b[i] = byte('a' + i%26)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A big file written in place: its fd is in the band, and the journal
// keeps the overwritten spans only, whatever call writes them.
func TestBandKeepsOnlyTheOverwrittenSpans(t *testing.T) {
	tree, jdir := fixture(t)
	bigFile(t, filepath.Join(tree, "big.bin"), 4<<20)
	script := `python3 -c '
import os
f = open("big.bin", "r+b", buffering=0)
print(f.fileno())
f.seek(100); f.write(b"WRITE")
os.pwrite(f.fileno(), b"PWRITE", 2<<20)
f.seek(3<<20); os.writev(f.fileno(), [b"WRITE", b"V"])
os.pwritev(f.fileno(), [b"PWRITEV"], 1<<20)
f.seek(100); f.write(b"again")
f.seek(0, 2); f.write(b"grown")
f.close()'`
	before := snapshot(t, tree)
	out := run(t, tree, jdir, script)
	if fd, _ := strconv.Atoi(strings.TrimSpace(out)); fd < bandLo || fd >= appendLo {
		t.Errorf("the file's fd is %q, want one in the band", out)
	}
	b, _ := os.ReadFile(filepath.Join(tree, "big.bin"))
	if string(b[100:105]) != "again" || string(b[2<<20:2<<20+6]) != "PWRITE" || string(b[3<<20:3<<20+6]) != "WRITEV" ||
		string(b[1<<20:1<<20+7]) != "PWRITEV" || !strings.HasSuffix(string(b), "grown") {
		t.Error("the writes did not land as in plain bash")
	}
	if n := keptBytes(t, jdir); n > 8192 {
		t.Errorf("the journal keeps %d bytes for 30 bytes overwritten", n)
	}
	if err := Restore(jdir); err != nil {
		t.Fatal(err)
	}
	sameTree(t, before, snapshot(t, tree))
}

func TestBandOpenWithoutWritesKeepsNothing(t *testing.T) {
	tree, jdir := fixture(t)
	bigFile(t, filepath.Join(tree, "big.bin"), 4<<20)
	roundTrip(t, tree, jdir, `python3 -c 'f = open("big.bin", "r+b"); f.read(10); f.close()'`, func() {
		if n := keptBytes(t, jdir); n > 4096 {
			t.Errorf("the journal keeps %d bytes for no write", n)
		}
	})
}

// A dup out of the band and a shared mmap would write unseen: the file is
// kept whole first.
func TestBandDupAndMmapKeepTheWholeFile(t *testing.T) {
	for name, script := range map[string]string{
		"dup":  `python3 -c 'import os; f = open("big.bin", "r+b"); d = os.dup(f.fileno()); os.write(d, b"DUP")'`,
		"dup2": `python3 -c 'import os; f = open("big.bin", "r+b"); os.dup2(f.fileno(), 7); os.write(7, b"DUP2")'`,
		"mmap": `python3 -c 'import mmap; f = open("big.bin", "r+b"); m = mmap.mmap(f.fileno(), 0); m[5:9] = b"MMAP"; m.flush()'`,
		"bash": `exec 3<>big.bin; printf BASH >&3`,
	} {
		t.Run(name, func(t *testing.T) {
			tree, jdir := fixture(t)
			bigFile(t, filepath.Join(tree, "big.bin"), 2<<20)
			roundTrip(t, tree, jdir, script, func() {
				b, _ := os.ReadFile(filepath.Join(tree, "big.bin"))
				if string(b[:4]) == "abcd" && string(b[5:9]) == "fghi" {
					t.Error("the command's write did not land")
				}
			})
		})
	}
}

func TestBandSqliteUpdateOfABigDatabase(t *testing.T) {
	sqlite, err := exec.LookPath("sqlite3")
	if err != nil {
		t.Fatal("sqlite3 is needed (apt-get install sqlite3)")
	}
	tree, jdir := fixture(t)
	db := filepath.Join(tree, "big.db")
	fill := "create table t(id integer primary key, v text); with recursive c(i) as (select 1 union all select i+1 from c where i < 20000) insert into t select i, printf('%0200d', i) from c;"
	if out, err := exec.Command(sqlite, db, fill).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	roundTrip(t, tree, jdir, "sqlite3 big.db \"update t set v='z' where id=7\"", func() {
		out, _ := exec.Command(sqlite, db, "select v from t where id in (6,7)").Output()
		if !strings.HasSuffix(string(out), "\nz\n") {
			t.Errorf("after the update: %q", out)
		}
		if n := keptBytes(t, jdir); n > 64<<10 {
			t.Errorf("the journal keeps %d bytes for one row", n)
		}
	})
}

// A shrink of a band file keeps the tail it cuts, not the whole file.
func TestBandTruncateKeepsTheTail(t *testing.T) {
	tree, jdir := fixture(t)
	bigFile(t, filepath.Join(tree, "big.bin"), 4<<20)
	script := `python3 -c '
import os
f = open("big.bin", "r+b")
os.ftruncate(f.fileno(), (4<<20) - 1000)
os.posix_fallocate(f.fileno(), 0, 5<<20)
f.seek(10); f.write(b"x"); f.close()'`
	roundTrip(t, tree, jdir, script, func() {
		if n := keptBytes(t, jdir); n > 8192 {
			t.Errorf("the journal keeps %d bytes for a 1000-byte cut", n)
		}
	})
}

// A unix socket the command binds in the tree is a name it made.
func TestBindMakesAName(t *testing.T) {
	tree, jdir := fixture(t)
	roundTrip(t, tree, jdir, `python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.bind("made.sock")'`, func() {
		if _, err := os.Lstat(filepath.Join(tree, "made.sock")); err != nil {
			t.Error("the command's bind made no socket")
		}
	})
}

// A big file's append keeps only its length, its fd in the band's upper
// part; every way that fd could come to write elsewhere keeps the whole
// file first, so each rewind is exact.
func TestBigAppendFdThatComesToWriteElsewhere(t *testing.T) {
	const over = `fcntl.fcntl(d, fcntl.F_SETFL, 0); os.lseek(d, 0, 0); os.write(d, b"OVER")`
	py := func(open, body string) string {
		return "python3 -c 'import fcntl, os\n" + open + "\n" + body + "'"
	}
	const appendOpen = `f = os.open("big.log", os.O_WRONLY | os.O_APPEND)`
	for name, script := range map[string]string{
		"setfl":         py(appendOpen, "d = f; "+over),
		"dup":           py(appendOpen, "d = os.dup(f); "+over),
		"dup2 to 7":     py(appendOpen, "d = os.dup2(f, 7); "+over),
		"F_DUPFD":       py(appendOpen, "d = fcntl.fcntl(f, fcntl.F_DUPFD, 20); "+over),
		"exec then 1":   "exec >>big.log; " + py("d = 1", over),
		"exec then dup": "exec >>big.log; " + py("d = os.dup(1)", over),
		"exec 5":        "exec 5>>big.log; " + py("d = 5", over),
	} {
		t.Run(name, func(t *testing.T) {
			tree, jdir := fixture(t)
			bigFile(t, filepath.Join(tree, "big.log"), 2<<20)
			roundTrip(t, tree, jdir, script, func() {
				b, _ := os.ReadFile(filepath.Join(tree, "big.log"))
				if string(b[:4]) != "OVER" {
					t.Errorf("the command's write did not land: %q", b[:4])
				}
			})
		})
	}
}

// The shell's ways of appending to a big file keep only its length.
func TestBigAppendsByTheShellKeepLittle(t *testing.T) {
	for name, script := range map[string]string{
		"echo":        `echo one >> big.log`,
		"ls":          `ls >> big.log`,
		"exec":        `(exec >>big.log; echo one; echo two >&2) 2>>big.log`,
		"nonblocking": `python3 -c 'import fcntl, os; f = os.open("big.log", os.O_WRONLY | os.O_APPEND); fcntl.fcntl(f, fcntl.F_SETFL, os.O_APPEND | os.O_NONBLOCK); os.write(f, b"one\n")'`,
	} {
		t.Run(name, func(t *testing.T) {
			tree, jdir := fixture(t)
			bigFile(t, filepath.Join(tree, "big.log"), 4<<20)
			roundTrip(t, tree, jdir, script, func() {
				if info, _ := os.Stat(filepath.Join(tree, "big.log")); info.Size() <= 4<<20 {
					t.Error("the append did not land")
				}
				if n := keptBytes(t, jdir); n > 16<<10 {
					t.Errorf("the journal keeps %d bytes for an append, want only a record", n)
				}
			})
		})
	}
}
