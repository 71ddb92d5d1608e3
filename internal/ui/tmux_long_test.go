package ui_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/ui/uitest"
)

// TestTmuxLongReplies streams replies taller than the screen — a long
// paragraph, a 300-line code block, a wide table, CJK text with emoji —
// fast and slow into real terminals of three sizes, resizing one of them
// mid-stream, and checks the whole scrollback: every numbered line of
// every reply exactly once and in order, no raw Markdown left behind, no
// spinner frame.
func TestTmuxLongReplies(t *testing.T) {
	needTmux(t)
	bin := fakeagent(t)
	type reply struct {
		shape  string
		letter byte
		n      int
	}
	replies := []reply{{"paragraph", 'P', 150}, {"code", 'C', 300}, {"table", 'T', 30}, {"cjk", 'J', 60}}
	sizes := []struct {
		w, h   int
		slow   string // the reply streamed slowly; the others come fast
		resize string // the reply during which the window is resized
		to     [2]int
	}{
		{80, 24, "paragraph", "code", [2]int{70, 20}},
		{100, 30, "code", "paragraph", [2]int{120, 34}},
		{120, 40, "cjk", "table", [2]int{100, 30}},
	}
	for _, sz := range sizes {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			t.Parallel()
			p := &pane{t: t, socket: fmt.Sprintf("tinygo-long-%d-%d", os.Getpid(), sz.w)}
			conf := filepath.Join(t.TempDir(), "tmux.conf")
			if err := os.WriteFile(conf, []byte("set -g history-limit 100000\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			p.conf = conf
			p.tmux("new-session", "-d", "-x", fmt.Sprint(sz.w), "-y", fmt.Sprint(sz.h), "-s", "s",
				"sh", "-c", fmt.Sprintf("TERM=tmux-256color %s -session long-1; sleep 60", bin))
			t.Cleanup(func() { exec.Command("tmux", "-L", p.socket, "kill-server").Run() })
			p.waitText("/compact  /skill:name  /exit")

			for i, r := range replies {
				speed := "fast"
				if r.shape == sz.slow {
					speed = "slow"
				}
				p.text(fmt.Sprintf("reply %s %d %s", r.shape, r.n, speed))
				p.keys("Enter")
				if r.shape == sz.resize {
					p.waitText(fmt.Sprintf("[%c%03d]", r.letter, r.n/3))
					p.tmux("resize-window", "-t", "s", "-x", fmt.Sprint(sz.to[0]), "-y", fmt.Sprint(sz.to[1]))
				}
				p.waitFor(fmt.Sprintf("the end of reply %d", i+1), func(string) bool {
					return strings.Count(p.captureAll(), "850 out") == i+1
				})
			}
			// The live area is down to the input; settle the last frame.
			time.Sleep(300 * time.Millisecond)
			all := p.captureAll()
			var problems []string
			for _, r := range replies {
				if msg := uitest.CheckTags(all, r.letter, r.n); msg != "" {
					problems = append(problems, r.shape+": "+msg)
				}
			}
			for _, bad := range []string{"```", "|---", "Writing…", "Thinking…", "Esc aborts ·", "⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"} {
				if strings.Contains(all, bad) {
					problems = append(problems, fmt.Sprintf("the scrollback holds %q", bad))
				}
			}
			if len(problems) > 0 {
				t.Fatalf("%s\nscrollback:\n%s", strings.Join(problems, "\n"), all)
			}
		})
	}
}

// captureAll is the whole scrollback and screen, wrapped lines joined.
func (p *pane) captureAll() string {
	return p.tmux("capture-pane", "-p", "-J", "-S", "-", "-E", "-", "-t", "s")
}

// The input history outlives the process: after a restart in the same
// directory, Up recalls the last input and Ctrl+R finds older ones.
func TestTmuxHistoryAcrossRestarts(t *testing.T) {
	needTmux(t)
	bin := fakeagent(t)
	dir := t.TempDir()
	p := &pane{t: t, socket: fmt.Sprintf("tinygo-hist-%d", os.Getpid())}
	run := fmt.Sprintf("TERM=tmux-256color %s -session hist-1 -dir %s", bin, dir)
	p.tmux("new-session", "-d", "-x", "100", "-y", "30", "-s", "s", "sh", "-c", run+"; echo FIRST-EXIT; "+run+"; sleep 60")
	t.Cleanup(func() { exec.Command("tmux", "-L", p.socket, "kill-server").Run() })
	p.waitText("/compact  /skill:name  /exit")
	for _, prompt := range []string{"fix the parser", "add a test"} {
		p.text(prompt)
		p.keys("Enter")
		p.waitText("You said: " + prompt)
		p.waitFor("the run to end", func(s string) bool { return strings.Count(s, "% cached") >= 1 && !strings.Contains(s, "Esc aborts ·") })
	}
	p.waitFor("both runs to end", func(s string) bool { return strings.Count(s, "% cached") == 2 })
	p.keys("C-c", "C-c") // on an empty idle prompt: the second exits
	p.waitText("FIRST-EXIT")
	p.waitFor("the second start", func(s string) bool { return strings.Count(s, "/compact  /skill:name  /exit") == 2 })

	p.keys("Up")
	p.waitFor("Up to recall the last input", func(string) bool { return strings.TrimSpace(p.cursorLine()) == "> add a test" })
	p.keys("C-u")
	p.keys("C-r")
	p.text("pars")
	p.waitFor("Ctrl+R to find the older input", func(string) bool { return strings.TrimSpace(p.cursorLine()) == "> fix the parser" })
	p.waitText("search history: pars")
	p.keys("Enter", "Enter")
	p.waitFor("the recalled input to run", func(s string) bool { return strings.Count(s, "You said: fix the parser") == 2 })
}
