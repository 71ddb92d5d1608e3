package ui_test

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/ui/uitest"
)

// A fenced Go block streamed slowly into a real 80x24 terminal (so it is
// committed in chunks) lands in the scrollback highlighted, under one
// "Go" label, every line exactly once; with NO_COLOR it has no colour.
func TestTmuxCodeIsHighlightedOnce(t *testing.T) {
	needTmux(t)
	bin := fakeagent(t)
	for _, c := range []struct {
		name, env string
		colour    bool
	}{{"256", "TERM=tmux-256color", true}, {"NO_COLOR", "TERM=tmux-256color NO_COLOR=1", false}} {
		t.Run(c.name, func(t *testing.T) {
			p := &pane{t: t, socket: fmt.Sprintf("tinygo-code-%d-%s", os.Getpid(), c.name)}
			p.tmux("new-session", "-d", "-x", "80", "-y", "24", "-s", "s",
				"sh", "-c", fmt.Sprintf("%s %s -session code-1; sleep 60", c.env, bin))
			t.Cleanup(func() { exec.Command("tmux", "-L", p.socket, "kill-server").Run() })
			p.waitText("/compact  /skill:name  /exit")
			p.text("reply code 60 slow")
			p.keys("Enter")
			// The reply's end is printed above the live region a frame
			// before the region itself is redrawn without the stream.
			p.waitFor("the end of the reply", func(string) bool {
				all := p.captureAll()
				return strings.Contains(all, "850 out") && !strings.Contains(all, "Writing…")
			})

			all := p.captureAll()
			if msg := uitest.CheckTags(all, 'C', 60); msg != "" {
				t.Fatalf("%s\nscrollback:\n%s", msg, all)
			}
			labels := 0
			for l := range strings.SplitSeq(all, "\n") {
				if strings.TrimSpace(l) == "Go" {
					labels++
				}
			}
			if labels != 1 {
				t.Errorf("%d \"Go\" labels in the scrollback:\n%s", labels, all)
			}
			styled := p.tmux("capture-pane", "-p", "-e", "-J", "-S", "-", "-E", "-", "-t", "s")
			for _, tag := range []string{"[C001]", "[C030]", "[C060]"} {
				line := lineWith(styled, tag)
				if line == "" {
					t.Fatalf("no %s in the styled scrollback:\n%s", tag, styled)
				}
				// compute( is a function name (blue, 75), the comment grey (244).
				fn := regexp.MustCompile(`\x1b\[[0-9;]*38;5;75m(\x1b\[[0-9;]*m)*compute`).MatchString(line)
				anyColour := regexp.MustCompile(`\x1b\[[0-9;]*(3[0-7]|9[0-7]|38;5;[0-9]+)m`).MatchString(line)
				if c.colour && !fn {
					t.Errorf("%s is not highlighted: %q", tag, line)
				}
				if !c.colour && anyColour {
					t.Errorf("NO_COLOR: %s has colours: %q", tag, line)
				}
			}
		})
	}
}

func lineWith(s, sub string) string {
	for l := range strings.SplitSeq(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}
