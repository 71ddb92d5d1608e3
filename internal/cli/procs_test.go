package cli

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/procs"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// escapee is a `setsid sleep N &` a bash command leaves behind, N unique
// so the test can tell its process by command line.
type escapee struct{ secs string }

func newEscapee() escapee { return escapee{strconv.Itoa(200000 + rand.IntN(700000))} }

// script starts the escapee in a new session, writes its pid to file and
// then runs rest.
func (e escapee) script(file, rest string) string {
	return "setsid sleep " + e.secs + " >/dev/null 2>&1 & echo $! > " + file + "; " + rest
}

// alive reports whether a live (non-zombie) process runs `sleep N`.
func (e escapee) alive() bool { return e.pid() != 0 }

// pid is the live (non-zombie) process that runs `sleep N`, or 0.
func (e escapee) pid() int {
	want := []byte("sleep\x00" + e.secs + "\x00")
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil || !bytes.Equal(b, want) {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		s := string(stat)
		if i := strings.LastIndexByte(s, ')'); i > 0 && !strings.HasPrefix(s[i+1:], " Z") {
			return pid
		}
	}
	return 0
}

// goneWithin waits for the escapee to be gone.
func (e escapee) goneWithin(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if !e.alive() {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// appeared waits for the escapee to run (its pid is printed when it is
// forked, maybe before sleep is exec'd).
func (e escapee) appeared() bool {
	deadline := time.Now().Add(5 * time.Second)
	for !e.alive() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// kill cleans up after a failed test.
func (e escapee) kill(t *testing.T, _ string) {
	t.Cleanup(func() {
		// By command line: the pid in the file may be one of the
		// command's own PID namespace.
		if pid := e.pid(); pid > 1 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

// program is tiny-go as cmd/tiny-go runs it, in dir, against srv.
func program(t *testing.T, dir string, srv *providertest.Server, args ...string) *exec.Cmd {
	cmd := exec.Command(programAs(t, "tiny-go-program"), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), childEnv+"=1", "OPENROUTER_API_KEY=test-key",
		"TINY_ENDPOINT="+srv.URL(), "OTEL_SDK_DISABLED=true")
	return cmd
}

// waitFile waits for file to hold a line.
func waitFile(t *testing.T, file string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		if b, err := os.ReadFile(file); err == nil && bytes.HasSuffix(b, []byte("\n")) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never written", file)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func bashCall(t *testing.T, command string) providertest.Reply {
	return providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", mustJSON(t, map[string]string{"command": command}))}}
}

// `setsid sleep N &` is gone after an abort (the path Esc and SIGTERM
// take), after a normal exit, and after a SIGKILL of tiny-go followed by a
// resume in that directory.
func TestProcessesStayDead(t *testing.T) {
	if testing.Short() {
		t.Skip("runs tiny-go as a real process")
	}
	t.Run("abort", func(t *testing.T) {
		dir, e := t.TempDir(), newEscapee()
		// Outside the working directory: a running command's writes there
		// reach the tree only when it ends (the overlay).
		pidFile := filepath.Join(t.TempDir(), "escapee.pid")
		e.kill(t, pidFile)
		srv := providertest.New(t, bashCall(t, e.script(pidFile, "sleep 60")))
		cmd := program(t, dir, srv, "start it")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitFile(t, pidFile)
		if !e.appeared() {
			t.Fatal("the escapee did not start")
		}
		cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err == nil {
			t.Fatalf("an aborted run exited 0: %s", stderr.String())
		}
		if !e.goneWithin(5 * time.Second) {
			t.Fatalf("`setsid sleep %s &` survived the abort", e.secs)
		}
	})
	t.Run("exit", func(t *testing.T) {
		dir, e := t.TempDir(), newEscapee()
		// Outside the working directory: a running command's writes there
		// reach the tree only when it ends (the overlay).
		pidFile := filepath.Join(t.TempDir(), "escapee.pid")
		e.kill(t, pidFile)
		srv := providertest.New(t, bashCall(t, e.script(pidFile, "true")), providertest.Reply{Text: "started"})
		cmd := program(t, dir, srv, "start it")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("tiny-go: %v: %s", err, out)
		}
		if !e.goneWithin(5 * time.Second) {
			t.Fatalf("`setsid sleep %s &` survived the exit of tiny-go", e.secs)
		}
	})
	t.Run("sigkill then resume", func(t *testing.T) {
		dir, e := t.TempDir(), newEscapee()
		// Outside the working directory: a running command's writes there
		// reach the tree only when it ends (the overlay).
		pidFile := filepath.Join(t.TempDir(), "escapee.pid")
		e.kill(t, pidFile)
		srv := providertest.New(t, bashCall(t, e.script(pidFile, "sleep 60")), providertest.Reply{Text: "recovered"})
		// tiny-go runs under a keeper, a child subreaper: whatever tiny-go
		// leaves behind is reparented to the keeper, which keeps it (and
		// reaps it), whatever the processes above this test do with
		// orphans. So the escapee outlives the SIGKILL for certain.
		k := startKeeper(t, program(t, dir, srv, "start it"))
		waitFile(t, pidFile)
		if !e.appeared() {
			t.Fatal("the escapee did not start")
		}
		if err := syscall.Kill(k.child, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		k.waitGone(t, k.child)
		if namespaced(t) {
			// The command's PID namespace died with its init.
			if !e.goneWithin(2 * time.Second) {
				t.Fatalf("`setsid sleep %s &` survived the SIGKILL of tiny-go", e.secs)
			}
			// The resume removes the killed command's overlay, whose
			// work/work the kernel made mode 000: an unprivileged user
			// could not delete the project otherwise.
			out, err := resumeKilled(t, dir, srv).CombinedOutput()
			if err != nil {
				t.Fatalf("the resume: %v: %s", err, out)
			}
			if work, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "checkpoints", "tx", "*", "work")); len(work) != 0 {
				t.Errorf("overlay layers left after the resume: %v", work)
			}
			return
		}
		// Its parent bash died with tiny-go (Pdeathsig); the escapee now
		// belongs to the keeper.
		pid := e.pid()
		deadline := time.Now().Add(5 * time.Second)
		for pid != 0 && parentOf(pid) != k.cmd.Process.Pid && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
			pid = e.pid()
		}
		if pid == 0 {
			t.Fatal("the escapee died with tiny-go: nothing is left for the resume to find")
		}
		if ppid := parentOf(pid); ppid != k.cmd.Process.Pid {
			t.Fatalf("the escapee's parent is %d, not the keeper %d", ppid, k.cmd.Process.Pid)
		}
		out, err := resumeKilled(t, dir, srv).CombinedOutput()
		if !e.goneWithin(5 * time.Second) {
			t.Fatalf("`setsid sleep %s &` survived the SIGKILL and the resume (%v: %s)", e.secs, err, out)
		}
		if !strings.Contains(string(out), "stopped 1 process") && !strings.Contains(string(out), "process(es) left running") {
			t.Errorf("the resume did not say what it stopped: %s", out)
		}
		if entries, _ := os.ReadDir(filepath.Join(dir, ".tiny-agent", "procs")); len(entries) != 0 {
			t.Errorf("process records left after the resume: %v", entries)
		}
	})
}

// resumeKilled is tiny-go resuming the one session in dir.
func resumeKilled(t *testing.T, dir string, srv *providertest.Server) *exec.Cmd {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "sessions", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("%d session files", len(files))
	}
	id := strings.TrimSuffix(filepath.Base(files[0]), ".jsonl")
	id = id[strings.LastIndexByte(id, '_')+1:]
	return program(t, dir, srv, "--json", "--session", id)
}

func init() { scriptCommands["orphan-keeper"] = keeperMain }

// keeperMain becomes a child subreaper, starts os.Args[1:] with its own
// environment, prints the child's pid and then reaps every child,
// adopted orphans included, until it is killed.
func keeperMain() {
	if err := procs.BecomeSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, "keeper:", err)
		os.Exit(3)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Dir = "."
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "keeper:", err)
		os.Exit(3)
	}
	fmt.Printf("%d\n", cmd.Process.Pid)
	for {
		var ws unix.WaitStatus
		if _, err := unix.Wait4(-1, &ws, 0, nil); err == unix.ECHILD {
			time.Sleep(20 * time.Millisecond)
		}
	}
}

type keeper struct {
	cmd   *exec.Cmd
	child int
}

// startKeeper runs cmd (a prepared exec.Cmd: its path, arguments,
// directory and environment are used) under an orphan keeper.
func startKeeper(t *testing.T, cmd *exec.Cmd) *keeper {
	t.Helper()
	k := &keeper{cmd: exec.Command(programAs(t, "orphan-keeper"), cmd.Args...)}
	k.cmd.Args[1] = cmd.Path
	k.cmd.Dir, k.cmd.Env = cmd.Dir, append(cmd.Env, childEnv+"=1")
	logFile, err := os.Create(filepath.Join(t.TempDir(), "keeper.log"))
	if err != nil {
		t.Fatal(err)
	}
	k.cmd.Stderr = logFile
	out, err := k.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := k.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		k.cmd.Process.Kill()
		k.cmd.Wait()
		logFile.Close()
	})
	var line [32]byte
	n, _ := out.Read(line[:])
	if k.child, err = strconv.Atoi(strings.TrimSpace(string(line[:n]))); err != nil {
		t.Fatalf("keeper said %q", line[:n])
	}
	return k
}

// waitGone waits until pid (a child of the keeper) is reaped.
func (k *keeper) waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid))); os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d was not reaped", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// parentOf is the parent pid of pid, or 0.
func parentOf(pid int) int {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// Esc in a real terminal while a bash command runs kills what the command
// started outside its process group, not only the group.
func TestEscKillsWhatTheCommandStarted(t *testing.T) {
	needTmux(t)
	dir, e := t.TempDir(), newEscapee()
	pidFile := filepath.Join(dir, "escapee.pid")
	e.kill(t, pidFile)
	srv := providertest.New(t, bashCall(t, e.script(pidFile, "sleep 60")))
	p := &tmuxPane{t: t, socket: fmt.Sprintf("tinygo-procs-%d", os.Getpid())}
	script := fmt.Sprintf(`cd %s && TERM=tmux-256color OPENROUTER_API_KEY=k OTEL_SDK_DISABLED=true TINY_ENDPOINT=%s %s=1 %s --approval auto; echo EXIT=$?; sleep 60`,
		dir, srv.URL(), childEnv, programAs(t, "tiny-go-program"))
	p.tmux("new-session", "-d", "-x", "110", "-y", "40", "-s", "s", "sh", "-c", script)
	t.Cleanup(func() { killTmux(p.socket) })

	p.waitText("Ctrl+C clears a draft")
	p.text("start the server")
	p.keys("Enter")
	p.wait("the escapee to start", func(string) bool { return e.alive() })
	p.keys("Escape")
	p.waitText("Aborted.")
	if !e.goneWithin(5 * time.Second) {
		t.Fatalf("`setsid sleep %s &` survived Esc", e.secs)
	}
	p.keys("C-c", "C-c") // on an empty idle prompt: the second exits
	p.waitText("EXIT=0")
}
