package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/procs"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// tmuxPane is a real terminal (a tmux pane on a private server socket).
type tmuxPane struct {
	t      *testing.T
	socket string
}

func (p *tmuxPane) tmux(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", p.socket, "-f", "/dev/null"}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (p *tmuxPane) screen() string { return p.tmux("capture-pane", "-p", "-S", "-500", "-t", "s") }
func (p *tmuxPane) keys(k ...string) {
	p.tmux(append([]string{"send-keys", "-t", "s"}, k...)...)
}
func (p *tmuxPane) text(s string) { p.tmux("send-keys", "-t", "s", "-l", s) }

func (p *tmuxPane) wait(what string, cond func(string) bool) {
	p.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := p.screen()
		if cond(s) {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("timed out waiting for %s; screen:\n%s", what, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (p *tmuxPane) waitText(s string) {
	p.t.Helper()
	p.wait(fmt.Sprintf("%q", s), func(screen string) bool { return strings.Contains(screen, s) })
}

func (p *tmuxPane) waitCount(s string, n int) {
	p.t.Helper()
	p.wait(fmt.Sprintf("%d× %q", n, s), func(screen string) bool { return strings.Count(screen, s) >= n })
}

// TestInteractiveTerminal runs the real program in tmux against the
// scripted provider: Esc while a reply streams, arrow keys and then Esc
// while `sleep 30` runs, /compact, Ctrl+C. It checks the screen and the
// session file.
func TestInteractiveTerminal(t *testing.T) {
	needTmux(t)
	srv := providertest.New(t,
		// 1: a reply that streams, then stalls: Esc aborts it.
		providertest.Reply{Text: strings.Repeat("streaming words ", 30), ChunkSize: 4, Hang: true, After: 20},
		// 2: a long bash call: arrow keys do nothing, Esc kills it.
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", `{"command":"echo $$ > $MARKS/bash.pid; sleep 30"}`)}},
		// 3-4: two plain turns, so there is history to compact.
		providertest.Reply{Text: "third answer"},
		providertest.Reply{Text: "fourth answer", Usage: &providertest.Usage{PromptTokens: 200, CompletionTokens: 9}},
		// 5: the summary.
		providertest.Reply{Text: "SUMMARY OF EARLIER WORK"},
	)
	dir := t.TempDir()
	// The pid file lies outside the working directory: a running
	// command's writes there reach the tree only when it ends (the overlay).
	marks := t.TempDir()
	bin := programAs(t, "tiny-go")
	p := &tmuxPane{t: t, socket: fmt.Sprintf("tinygo-cli-%d", os.Getpid())}
	script := fmt.Sprintf(`cd %s && MARKS=%s TERM=tmux-256color OPENROUTER_API_KEY=k OTEL_SDK_DISABLED=true TINY_ENDPOINT=%s %s --approval auto; echo EXIT=$?; sleep 60`, dir, marks, srv.URL(), bin)
	p.tmux("new-session", "-d", "-x", "110", "-y", "40", "-s", "s", "sh", "-c", script)
	t.Cleanup(func() { killTmux(p.socket) })

	p.waitText("Ctrl+C clears a draft")
	p.waitText("/compact  /skill:name  /exit")

	// Esc while the reply streams.
	p.text("tell me a story")
	p.keys("Enter")
	p.waitText("streaming words streaming")
	p.keys("Escape")
	p.waitCount("Aborted.", 1)

	// Arrow keys while bash runs must not abort; Esc does.
	p.text("run the deploy")
	p.keys("Enter")
	p.waitText("◆ bash echo $$ > $MARKS/bash.pid; sleep 30")
	pidFile := filepath.Join(marks, "bash.pid")
	p.wait("bash to start", func(string) bool { _, err := os.Stat(pidFile); return err == nil })
	p.keys("Up")
	p.keys("Down")
	p.keys("Left")
	p.keys("Right")
	time.Sleep(300 * time.Millisecond)
	if strings.Count(p.screen(), "Aborted.") != 1 {
		t.Fatalf("an arrow key aborted:\n%s", p.screen())
	}
	if st := reduceOnly(t, dir); st.Operation == nil || st.Operation.AbortRequested {
		t.Fatal("arrow keys touched the open run")
	}
	p.keys("Escape")
	p.waitCount("Aborted.", 2)
	var pid int
	if b, err := os.ReadFile(pidFile); err == nil {
		fmt.Sscan(strings.TrimSpace(string(b)), &pid)
	}
	if pid == 0 || procs.GroupAlive(pid) {
		t.Fatalf("the bash process group %d survived Esc", pid)
	}

	p.text("third")
	p.keys("Enter")
	p.waitText("third answer")
	p.text("fourth")
	p.keys("Enter")
	p.waitText("fourth answer")
	p.waitText("200 in · 9 out")

	p.text("/compact")
	p.keys("Enter")
	p.waitText("Compacted 1 messages (kept last 7).")

	p.keys("C-c", "C-c") // on an empty idle prompt: the second exits
	p.waitText("Resume: tiny-go --session ")
	p.waitText("EXIT=0")

	st := reduceOnly(t, dir)
	if !st.Idle() {
		t.Fatal("an operation is still open")
	}
	if *st.ActiveContext[0].Content != "[Compacted history]\nSUMMARY OF EARLIER WORK" {
		t.Fatalf("active context starts with %q", *st.ActiveContext[0].Content)
	}
	b, _ := os.ReadFile(sessionFiles(t, dir)[0])
	file := string(b)
	for _, want := range []string{`"phase":"model"`, `"phase":"tool"`, `"reason":"interrupted"`, `"type":"compactionStarted"`} {
		if !strings.Contains(file, want) {
			t.Errorf("session file lacks %s", want)
		}
	}
	if n := strings.Count(file, `"outcome":"aborted"`); n != 2 {
		t.Errorf("%d aborted operations, want 2", n)
	}

	// Resumed, the store has released the compacted turn's text: the
	// recap shows the active context's turns and one line for the
	// compacted part, never the summary as a prompt.
	q := &tmuxPane{t: t, socket: fmt.Sprintf("tinygo-cli-resume-%d", os.Getpid())}
	script = fmt.Sprintf(`cd %s && TERM=tmux-256color OPENROUTER_API_KEY=k OTEL_SDK_DISABLED=true TINY_ENDPOINT=%s %s --approval auto --session %s; echo EXIT=$?; sleep 60`, dir, srv.URL(), bin, st.Header.ID)
	q.tmux("new-session", "-d", "-x", "110", "-y", "40", "-s", "s", "sh", "-c", script)
	t.Cleanup(func() { killTmux(q.socket) })
	q.waitText("── resumed ──")
	screen := q.screen()
	for _, want := range []string{"… earlier turns were compacted", "> run the deploy", "> fourth", "fourth answer"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the resumed recap lacks %q:\n%s", want, screen)
		}
	}
	for _, not := range []string{"SUMMARY OF EARLIER WORK", "tell me a story"} {
		if strings.Contains(screen, not) {
			t.Errorf("the resumed recap shows %q:\n%s", not, screen)
		}
	}
	q.keys("C-c", "C-c")
	q.waitText("EXIT=0")
}

func sessionFiles(t *testing.T, dir string) []string {
	m, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "sessions", "*.jsonl"))
	if len(m) != 1 {
		t.Fatalf("%d session files", len(m))
	}
	return m
}

func reduceOnly(t *testing.T, dir string) *session.State {
	t.Helper()
	b, err := os.ReadFile(sessionFiles(t, dir)[0])
	if err != nil {
		t.Fatal(err)
	}
	st, c := session.Reduce(b)
	if c != nil {
		t.Fatalf("session does not reduce: %v", c)
	}
	return st
}

// needTmux skips a real-terminal test in short mode and where tmux is not
// installed.
func needTmux(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("short mode")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed")
	}
}

// killTmux stops the tmux server on socket and waits (up to 10 s) until
// the programs its panes ran, and their children, have exited, so a test's
// temporary directories are removed after the last write into them.
func killTmux(socket string) {
	out, _ := exec.Command("tmux", "-L", socket, "list-panes", "-a", "-F", "#{pane_pid}").Output()
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		var pid int
		if _, err := fmt.Sscan(f, &pid); err == nil {
			pids = append(pids, descendants(pid)...)
		}
	}
	_ = exec.Command("tmux", "-L", socket, "kill-server").Run()
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for time.Now().Before(deadline) {
			if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// descendants is pid and every process below it.
func descendants(pid int) []int {
	children := map[int][]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, s := range stats {
		b, err := os.ReadFile(s)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after ')'.
		i := strings.LastIndexByte(string(b), ')')
		var self, ppid int
		var state string
		fmt.Sscan(string(b), &self)
		if i < 0 {
			continue
		}
		if _, err := fmt.Sscan(string(b[i+1:]), &state, &ppid); err == nil {
			children[ppid] = append(children[ppid], self)
		}
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}
