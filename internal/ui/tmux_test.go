package ui_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestTmux drives the real program (uitest/fakeagent) in a tmux pane:
// typing and Enter, Esc while streaming, the history on Up, arrow keys
// while a tool runs (they must not abort), Ctrl+C (aborts, then exits with
// the terminal restored and the resume hint printed).
func TestTmux(t *testing.T) {
	needTmux(t)
	bin := fakeagent(t)
	for _, term := range []string{"screen", "tmux-256color"} {
		t.Run(term, func(t *testing.T) { tmuxSession(t, bin, term) })
	}
}

// binDir holds the test program built by fakeagent; TestMain removes it.
var binDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// fakeagent builds the test program once per test binary run.
func fakeagent(t *testing.T) string {
	t.Helper()
	bin, err := buildFakeagent()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

var buildFakeagent = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "tinygo-ui-")
	if err != nil {
		return "", err
	}
	binDir = dir
	bin := filepath.Join(dir, "fakeagent")
	if out, err := exec.Command("go", "build", "-o", bin, "./uitest/fakeagent").CombinedOutput(); err != nil {
		return "", fmt.Errorf("build fakeagent: %v\n%s", err, out)
	}
	return bin, nil
})

type pane struct {
	t      *testing.T
	socket string
	conf   string // tmux configuration file; "" for none
}

func (p *pane) tmux(args ...string) string {
	p.t.Helper()
	conf := p.conf
	if conf == "" {
		conf = "/dev/null"
	}
	out, err := exec.Command("tmux", append([]string{"-L", p.socket, "-f", conf}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (p *pane) capture() string { return p.tmux("capture-pane", "-p", "-S", "-300", "-t", "s") }

// screenLine is the visible line the cursor is on (the input line).
func (p *pane) cursorLine() string {
	y, err := strconv.Atoi(strings.TrimSpace(p.tmux("display-message", "-p", "-t", "s", "#{cursor_y}")))
	if err != nil {
		p.t.Fatal(err)
	}
	lines := strings.Split(p.tmux("capture-pane", "-p", "-t", "s"), "\n")
	if y >= len(lines) {
		return ""
	}
	return lines[y]
}

func (p *pane) waitFor(what string, cond func(screen string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		s := p.capture()
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("timed out waiting for %s; screen:\n%s", what, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (p *pane) waitText(s string) string {
	p.t.Helper()
	return p.waitFor(fmt.Sprintf("%q", s), func(screen string) bool { return strings.Contains(screen, s) })
}

func (p *pane) keys(keys ...string) { p.tmux(append([]string{"send-keys", "-t", "s"}, keys...)...) }
func (p *pane) text(s string)       { p.tmux("send-keys", "-t", "s", "-l", s) }

func tmuxSession(t *testing.T, bin, term string) {
	p := &pane{t: t, socket: fmt.Sprintf("tinygo-ui-%d-%s", os.Getpid(), term)}
	script := fmt.Sprintf(`TERM=%s %s -session test-123 ; echo EXIT=$?; stty -a | tr ' ;' '\n\n' | grep -x -e icanon -e echo | tr '\n' ' '; echo STTY; sleep 60`, term, bin)
	p.tmux("new-session", "-d", "-x", "100", "-y", "30", "-s", "s", "sh", "-c", script)
	t.Cleanup(func() { exec.Command("tmux", "-L", p.socket, "kill-server").Run() })

	p.waitText("/compact  /skill:name  /exit")
	p.waitText("session id: test-123")

	p.text("hello tmux")
	p.keys("Enter")
	p.waitText("You said: hello tmux")
	p.waitText("85% cached")

	p.text("tell a long story")
	p.keys("Enter")
	p.waitText("word30")
	p.keys("Escape")
	screen := p.waitText("Aborted.")
	if strings.Contains(screen, "word400") {
		t.Fatalf("the stream ran to its end despite Esc:\n%s", screen)
	}

	p.keys("Up")
	p.waitFor("the last input recalled by Up", func(string) bool { return strings.TrimSpace(p.cursorLine()) == "> tell a long story" })
	p.keys("C-u")
	p.waitFor("an empty input", func(string) bool { return strings.TrimSpace(p.cursorLine()) == ">" })

	// A bracketed paste keeps its newlines and does not send the input.
	p.tmux("set-buffer", "-b", "clip", "pasted one\npasted two")
	p.tmux("paste-buffer", "-p", "-b", "clip", "-t", "s")
	p.waitFor("the pasted second line at the cursor", func(string) bool { return strings.TrimSpace(p.cursorLine()) == "pasted two" })
	if screen := p.capture(); !strings.Contains(screen, "> pasted one\n") || strings.Contains(screen, "You said: pasted") {
		t.Fatalf("paste:\n%s", screen)
	}
	p.keys("Enter")
	p.waitText("You said: pasted one pasted two")
	p.waitText("12 out") // the run has ended

	p.text("run the tool")
	p.keys("Enter")
	p.waitText("◆ bash sleep 30 && ls -la")
	p.waitText("Running bash…")
	p.keys("Up", "Down", "Left", "Right", "Home", "End")
	time.Sleep(600 * time.Millisecond)
	screen = p.capture()
	if n := strings.Count(screen, "Aborted."); n != 1 {
		t.Fatalf("arrow keys aborted the tool (%d Aborted. lines):\n%s", n, screen)
	}
	if !strings.Contains(screen, "Running bash…") {
		t.Fatalf("the tool is no longer running:\n%s", screen)
	}

	p.keys("C-c")
	screen = p.waitText("STTY")
	for _, want := range []string{"  └ interrupted", "Resume: tiny-go --session test-123", "EXIT=0", "icanon echo STTY"} {
		if !strings.Contains(screen, want) {
			t.Errorf("after Ctrl+C the screen lacks %q:\n%s", want, screen)
		}
	}
	if n := strings.Count(screen, "Aborted."); n != 2 {
		t.Errorf("%d Aborted. lines, want 2:\n%s", n, screen)
	}
	if strings.Contains(screen, "Exiting once") {
		t.Errorf("the live area was left behind:\n%s", screen)
	}
}

// A panic inside the program still restores the terminal and prints the
// resume hint.
func TestTmuxPanicRestoresTheTerminal(t *testing.T) {
	needTmux(t)
	bin := fakeagent(t)
	p := &pane{t: t, socket: fmt.Sprintf("tinygo-ui-%d-panic", os.Getpid())}
	script := fmt.Sprintf(`%s -session test-456 2>/dev/null; echo EXIT=$?; stty -a | tr ' ;' '\n\n' | grep -x -e icanon -e echo | tr '\n' ' '; echo STTY; sleep 60`, bin)
	p.tmux("new-session", "-d", "-x", "100", "-y", "30", "-s", "s", "sh", "-c", script)
	t.Cleanup(func() { exec.Command("tmux", "-L", p.socket, "kill-server").Run() })

	p.waitText("/compact  /skill:name  /exit")
	p.text("panic now")
	p.keys("Enter")
	screen := p.waitText("STTY")
	for _, want := range []string{"Resume: tiny-go --session test-456", "EXIT=1", "icanon echo STTY"} {
		if !strings.Contains(screen, want) {
			t.Errorf("after the panic the screen lacks %q:\n%s", want, screen)
		}
	}
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
