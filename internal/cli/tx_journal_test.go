package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/checkpoint/checkpointtest"
	"golang.org/x/sys/unix"
)

// Commands journaled on the tree (TINY_TX=journal, issue 42): what broke
// over the overlay behaves as in plain bash, as root and as uid 1000,
// and the rewind of the turn is exact.

// journalTurn: renames of directories (git mv, os.rename, mv of 50 MB),
// a write through one name of a hard-linked pair, a lock held by a
// process outside, an append to a file a process outside holds open, a
// FIFO with a partner outside.
var journalTurn = []string{
	"git mv src/d07 src/moved07 && echo GIT-MV-OK",
	`python3 -c 'import os; os.rename("d", "e")' && echo OS-RENAME-OK`,
	"mv data data2 && echo extra > data2/extra && echo MV-OK",
	"echo more >> pair1 && echo LINK-WRITTEN",
	"flock -n held.lock true && echo LOCK-TAKEN || echo LOCK-REFUSED",
	"echo from-command >> dev.log && echo APPENDED",
	"echo to-outside > pipe && echo FIFO-WRITTEN",
}

const journalSeed = renameSeedScript + ` && echo one > pair1 && ln pair1 pair2 && : > held.lock && echo start > dev.log && mkfifo pipe`

func TestJournaledCommandsBehaveAsPlainBash(t *testing.T) {
	for _, tool := range []string{"git", "python3", "flock"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed", tool)
		}
	}
	cases := map[string]int{"root": 0, "uid1000": 1000}
	if os.Geteuid() != 0 {
		cases = map[string]int{"unprivileged": os.Geteuid()}
	}
	for name, uid := range cases {
		t.Run(name, func(t *testing.T) {
			r := newTurnRun(t, uid, "tiny-go", journalSeed, journalTurn)
			r.env = []string{"TINY_TX=journal"}
			outside := holdOutside(t, r.dir)
			du := duOf(t, r.dir)
			out := r.run("rename the directories")
			grown := duOf(t, r.dir) - du
			res := r.results()
			outside.stop()
			for _, want := range []string{"GIT-MV-OK", "OS-RENAME-OK", "MV-OK", "LINK-WRITTEN", "LOCK-REFUSED", "APPENDED", "FIFO-WRITTEN"} {
				if !strings.Contains(res, want) {
					t.Errorf("no %s:\n%s\n%s", want, res, out)
				}
			}
			if strings.Contains(out, "over an overlay") {
				t.Fatalf("the commands were not journaled:\n%s", out)
			}
			if got := inodeOf(t, filepath.Join(r.dir, "data2/f1")); got != r.ino {
				t.Errorf("data2/f1 is a copy (inode %d, was %d)", got, r.ino)
			}
			if a, b := inodeOf(t, filepath.Join(r.dir, "pair1")), inodeOf(t, filepath.Join(r.dir, "pair2")); a != b {
				t.Errorf("the hard link was broken: pair1 %d, pair2 %d", a, b)
			}
			if got := outside.heard(); got != "to-outside\n" {
				t.Errorf("the FIFO's partner outside heard %q", got)
			}
			if data, _ := os.ReadFile(filepath.Join(r.dir, "dev.log")); string(data) != "start\nfrom-command\nfrom-outside\n" {
				t.Errorf("dev.log, written by the command and by its holder outside: %q", data)
			}
			if grown > 1<<20 {
				t.Errorf("the working directory with .tiny-agent grew by %d bytes", grown)
			}
			t.Logf("the working directory with .tiny-agent grew by %d KB", grown>>10)
			outside.undoOwnWrite(t)
			r.rewind()
			if a, b := inodeOf(t, filepath.Join(r.dir, "pair1")), inodeOf(t, filepath.Join(r.dir, "pair2")); a != b {
				t.Errorf("the rewind broke the hard link: pair1 %d, pair2 %d", a, b)
			}
		})
	}
}

// outsideProcs are processes outside tiny-go that share files of the
// tree with the turn's commands: a lock holder, a writer holding
// dev.log open, a FIFO reader.
type outsideProcs struct {
	dir   string
	procs []*exec.Cmd
	fifo  strings.Builder
	done  chan struct{}
}

func holdOutside(t *testing.T, dir string) *outsideProcs {
	o := &outsideProcs{dir: dir, done: make(chan struct{})}
	lock := exec.Command("flock", filepath.Join(dir, "held.lock"), "sleep", "60")
	writer := exec.Command("sh", "-c", `exec 3>>dev.log; while [ ! -e wrote ]; do sleep 0.05; done; echo from-outside >&3; rm wrote; sleep 60`)
	writer.Dir = dir
	reader := exec.Command("cat", filepath.Join(dir, "pipe"))
	reader.Stdout = &o.fifo
	for _, c := range []*exec.Cmd{lock, writer, reader} {
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		o.procs = append(o.procs, c)
	}
	go func() { reader.Wait(); close(o.done) }()
	time.Sleep(200 * time.Millisecond) // the lock is taken
	t.Cleanup(o.stop)
	return o
}

// heard is what the FIFO's reader read.
func (o *outsideProcs) heard() string {
	select {
	case <-o.done:
	case <-time.After(5 * time.Second):
	}
	return o.fifo.String()
}

// stop lets the writer write through its old descriptor, then ends
// them all.
func (o *outsideProcs) stop() {
	if o.procs == nil {
		return
	}
	os.WriteFile(filepath.Join(o.dir, "wrote"), nil, 0o644)
	for i := 0; i < 100; i++ {
		if _, err := os.Lstat(filepath.Join(o.dir, "wrote")); err != nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for i, c := range o.procs {
		syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		if i < len(o.procs)-1 { // the FIFO's reader is waited for by its own goroutine
			c.Wait()
		}
	}
	<-o.done
	o.procs = nil
}

// undoOwnWrite takes the outside writer's line off dev.log again: it is
// not the turn's, and a rewind rightly leaves a file changed since alone.
func (o *outsideProcs) undoOwnWrite(t *testing.T) {
	p := filepath.Join(o.dir, "dev.log")
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(int64(len(strings.TrimSuffix(string(data), "from-outside\n")))); err != nil {
		t.Fatal(fmt.Errorf("dev.log: %w", err))
	}
}

// Files past what a rewind reads whole (64 MiB): a 1 GB log appended to
// and a 100 MB file written in place keep next to nothing, and the rewind
// puts both back in place, their inodes, sizes and times as before, as
// root and as uid 1000.
func TestJournaledBigFilesAreRewoundInPlace(t *testing.T) {
	cases := map[string]int{"root": 0, "uid1000": 1000}
	if os.Geteuid() != 0 {
		cases = map[string]int{"unprivileged": os.Geteuid()}
	}
	seed := `truncate -s 1G big.log && head -c 100000000 /dev/urandom > db.bin && touch -d 2001-01-01 big.log db.bin`
	turn := []string{`echo line >> big.log && echo APPENDED`, `python3 -c 'f = open("db.bin", "r+b"); f.seek(1000); f.write(b"XYZ")' && echo WRITTEN`}
	for name, uid := range cases {
		t.Run(name, func(t *testing.T) {
			r := newTurnRun(t, uid, "tiny-go", seed, turn)
			r.env = []string{"TINY_TX=journal"}
			stats := map[string]unix.Stat_t{}
			for _, f := range []string{"big.log", "db.bin"} {
				var st unix.Stat_t
				if err := unix.Lstat(filepath.Join(r.dir, f), &st); err != nil {
					t.Fatal(err)
				}
				stats[f] = st
			}
			du := duOf(t, r.dir)
			r.run("append and write in place")
			if res := r.results(); !strings.Contains(res, "APPENDED") || !strings.Contains(res, "WRITTEN") {
				t.Fatalf("the commands did not run:\n%s", res)
			}
			grown := duOf(t, r.dir) - du
			if grown > 1<<20 {
				t.Errorf("the working directory with .tiny-agent grew by %d bytes", grown)
			}
			t0 := time.Now()
			out := r.run("session", "rewind", killedSession(t, r.dir, r.turnSession()), "--turn", "1", "--files-only")
			took := time.Since(t0)
			if d := listingDiff(checkpointtest.Listing(t, r.dir), r.before); d != "" || strings.Contains(out, "skip ") {
				t.Fatalf("after the rewind:\n%s\nrewind said:\n%s", d, out)
			}
			t.Logf("the turn kept %d kB; the rewind took %v (the whole process)", grown>>10, took)
			for f, was := range stats {
				var st unix.Stat_t
				if err := unix.Lstat(filepath.Join(r.dir, f), &st); err != nil {
					t.Fatal(err)
				}
				if st.Ino != was.Ino || st.Size != was.Size || st.Mtim != was.Mtim {
					t.Errorf("%s after the rewind: inode %d, %d bytes, mtime %v; want %d, %d, %v", f, st.Ino, st.Size, st.Mtim, was.Ino, was.Size, was.Mtim)
				}
			}
		})
	}
}
