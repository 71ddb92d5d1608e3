//go:build linux && (amd64 || arm64)

package journal

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// changes is a command that touches every kind of record.
const changes = "echo more >> log && printf new > f && mv d d2 && rm gone && mkdir -p n/m && " +
	"rmdir e && chmod 700 f && ln log hard && ln -s f sym && touch -d 2001-01-01 d2/x && " +
	"mv d2/x f2 && printf over > f2 && rm -r n"

func changesTree(t *testing.T) (tree, jdir string) {
	tree, jdir = fixture(t)
	write(t, filepath.Join(tree, "log"), "line\n")
	write(t, filepath.Join(tree, "f"), "old")
	write(t, filepath.Join(tree, "d/x"), "x")
	write(t, filepath.Join(tree, "gone"), "gone")
	if err := os.Mkdir(filepath.Join(tree, "e"), 0o750); err != nil {
		t.Fatal(err)
	}
	return tree, jdir
}

// A Restore cut short after any of its steps (as by a SIGKILL: the steps
// are the units) and run again gives the exact tree.
func TestRestoreCutShortAtEveryStep(t *testing.T) {
	defer func() { hitRestoreStep = func(int) {} }()
	for cut := 0; ; cut++ {
		tree, jdir := changesTree(t)
		before := snapshot(t, tree)
		run(t, tree, jdir, changes)
		steps := 0
		hitRestoreStep = func(int) {
			if steps == cut {
				panic(errCut)
			}
			steps++
		}
		finished := restoreUntilCut(t, jdir)
		hitRestoreStep = func(int) {}
		if err := Restore(jdir); err != nil {
			t.Fatalf("cut after %d steps, then Restore: %v", cut, err)
		}
		if err := Restore(jdir); err != nil {
			t.Fatalf("a second Restore: %v", err)
		}
		sameTree(t, before, snapshot(t, tree))
		if finished || t.Failed() {
			return
		}
	}
}

var errCut = errors.New("cut")

func restoreUntilCut(t *testing.T, jdir string) (finished bool) {
	defer func() {
		if r := recover(); r != nil && r != errCut {
			panic(r)
		}
	}()
	if err := Restore(jdir); err != nil {
		t.Fatal(err)
	}
	return true
}

// superviseChild is the test binary as a tiny-go that gets SIGKILLed: it
// runs a command under the journal and waits.
func superviseChild() {
	parts := strings.SplitN(os.Getenv("TINY_JOURNAL_TEST_SUPERVISE"), "\n", 3)
	cmd := exec.Command("/bin/bash", "-c", parts[2])
	cmd.Dir = parts[0]
	cmd.Stderr = os.Stderr
	s, err := Start(cmd, parts[0], parts[1])
	if err == nil {
		err = s.Wait()
	}
	fmt.Fprintln(os.Stderr, "supervisor:", err)
	os.Exit(3)
}

// The supervisor killed mid-command: the journal on disk is enough for
// Restore, and the command's leftover changing calls fail (ENOSYS) rather
// than change the tree unjournaled.
func TestSupervisorKilled(t *testing.T) {
	tree, jdir := changesTree(t)
	before := snapshot(t, tree)
	sig := t.TempDir()
	ready, killed := filepath.Join(sig, "ready"), filepath.Join(sig, "killed")
	script := changes + " && touch " + ready + " && until [ -e " + killed + " ]; do sleep 0.05; done; echo late > late; rm log"
	self, _ := os.Executable()
	sup := exec.Command(self, "-test.run=^$")
	sup.Env = append(os.Environ(), "TINY_JOURNAL_TEST_SUPERVISE="+tree+"\n"+jdir+"\n"+script)
	sup.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := sup.Start(); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(-sup.Process.Pid, syscall.SIGKILL)
	waitFor(t, ready)
	if err := sup.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = sup.Wait()
	write(t, killed, "") // the command goes on, and fails at its next changes
	for i := 0; syscall.Kill(-sup.Process.Pid, 0) == nil; i++ {
		if i == 3000 {
			t.Fatal("the command never ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(tree, "late")); err == nil {
		t.Error("a change made after the supervisor died went through")
	}
	if _, err := os.Stat(filepath.Join(tree, "log")); err != nil {
		t.Error("an unlink made after the supervisor died went through")
	}
	if err := Restore(jdir); err != nil {
		t.Fatal(err)
	}
	sameTree(t, before, snapshot(t, tree))
}

func waitFor(t *testing.T, path string) {
	t.Helper()
	for i := 0; i < 3000; i++ { // 30 s: a loaded CI machine
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never appeared", path)
}

// A FIFO and a unix socket in the tree are the real ones: a process
// outside the command talks with it through them.
func TestFIFOAndSocketWithAnOutsideProcess(t *testing.T) {
	tree, jdir := fixture(t)
	fifo, sock := filepath.Join(tree, "fifo"), filepath.Join(tree, "s.sock")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan string, 2)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- err.Error()
			return
		}
		defer f.Close()
		line, _ := bufio.NewReader(f).ReadString('\n')
		got <- "fifo:" + line
	}()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- err.Error()
			return
		}
		defer c.Close()
		line, _ := bufio.NewReader(c).ReadString('\n')
		got <- "sock:" + line
	}()
	script := `echo through > fifo && python3 -c 'import socket; s = socket.socket(socket.AF_UNIX); s.connect("s.sock"); s.sendall(b"hello\n")'`
	roundTrip(t, tree, jdir, script, nil)
	want := map[string]bool{"fifo:through\n": true, "sock:hello\n": true}
	for range 2 {
		if g := <-got; !want[g] {
			t.Errorf("the outside process got %q", g)
		}
	}
}

// A lock held outside is seen by the command, and one the command takes
// is seen outside: the file is the same inode.
func TestFlockWithAnOutsideProcess(t *testing.T) {
	tree, jdir := fixture(t)
	lock := filepath.Join(tree, "lock")
	write(t, lock, "")
	f, err := os.Open(lock)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	out := run(t, tree, jdir, "flock -n lock true && echo took || echo busy")
	if strings.TrimSpace(out) != "busy" {
		t.Errorf("with the lock held outside, the command says %q", out)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
	ready := filepath.Join(t.TempDir(), "ready")
	done := make(chan string, 1)
	go func() { done <- run(t, tree, jdir, "flock lock sh -c 'touch "+ready+"; sleep 1'") }()
	waitFor(t, ready)
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
		t.Error("the lock the command holds is not seen outside")
	}
	<-done
}

// Seccomp user notification needs no privilege once no_new_privs is set:
// as root, the suite runs again as uid 1000 (cloudsdk) on its own trees.
func TestAsUnprivilegedUser(t *testing.T) {
	if os.Getuid() != 0 {
		return // this run is the unprivileged one
	}
	if testing.Short() {
		t.Skip("runs the whole suite again")
	}
	base, err := os.MkdirTemp("", "journal-uid1000-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	self, _ := os.Executable()
	bin := filepath.Join(base, "journal.test")
	if out, err := exec.Command("cp", self, bin).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(base, 1000, 1000); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.count=1", "-test.v", "-test.skip=^TestAsUnprivilegedUser$")
	cmd.Dir = base
	cmd.Env = []string{"TMPDIR=" + base, "PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + base}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 1000, Gid: 1000}}
	out, err := cmd.CombinedOutput()
	if err != nil || strings.Count(string(out), "--- PASS") < 10 {
		t.Fatalf("as uid 1000: %v\n%s", err, out)
	}
}

// restoreChild is the test binary as a tiny-go whose Restore is SIGKILLed
// at its k-th hook (before or after a step's count).
func restoreChild() {
	dir, ks, _ := strings.Cut(os.Getenv("TINY_JOURNAL_TEST_RESTORE"), "\n")
	k, _ := strconv.Atoi(ks)
	n := 0
	hitRestoreStep = func(int) {
		if n++; n == k {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	}
	if err := Restore(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// A real SIGKILL of a Restore at every one of its steps, then Restore.
func TestRestoreSIGKILLedAtEveryStep(t *testing.T) {
	self, _ := os.Executable()
	for k := 1; ; k++ {
		tree, jdir := changesTree(t)
		before := snapshot(t, tree)
		run(t, tree, jdir, changes)
		child := exec.Command(self, "-test.run=^$")
		child.Env = append(os.Environ(), "TINY_JOURNAL_TEST_RESTORE="+jdir+"\n"+strconv.Itoa(k))
		out, err := child.CombinedOutput()
		killed := err != nil && strings.Contains(err.Error(), "killed")
		if err != nil && !killed {
			t.Fatalf("restore child: %v\n%s", err, out)
		}
		if err := Restore(jdir); err != nil {
			t.Fatalf("killed at hook %d, then Restore: %v", k, err)
		}
		sameTree(t, before, snapshot(t, tree))
		if !killed || t.Failed() {
			if k < 10 {
				t.Errorf("only %d kills: the hooks did not run", k)
			}
			t.Logf("%d Restores SIGKILLed, each finished by the next", k-1)
			return
		}
	}
}
