package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/cli/interactive"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// tiny-go --resume in a real terminal: the picker lists this directory's
// sessions, newest first, by first prompt; typing / filters; Enter resumes
// the chosen one, whose last turns are shown before the prompt.
func TestResumePickerInATerminal(t *testing.T) {
	needTmux(t)
	srv := providertest.New(t,
		providertest.Reply{Text: "The **parser** is fixed."},
		providertest.Reply{Text: "Tests added."},
	)
	c := newCLI(t, srv)
	for _, prompt := range []string{"fix the parser", "add the tests"} {
		if code, _, stderr := c.main("", prompt); code != 0 {
			t.Fatalf("one-shot %q: %d %s", prompt, code, stderr)
		}
	}
	bin := programAs(t, "tiny-go")
	p := &tmuxPane{t: t, socket: fmt.Sprintf("tinygo-resume-%d", os.Getpid())}
	script := fmt.Sprintf(`cd %s && TERM=tmux-256color OPENROUTER_API_KEY=k OTEL_SDK_DISABLED=true TINY_ENDPOINT=%s %s --resume; echo EXIT=$?; sleep 60`, c.dir, srv.URL(), bin)
	p.tmux("new-session", "-d", "-x", "100", "-y", "30", "-s", "s", "sh", "-c", script)
	t.Cleanup(func() { killTmux(p.socket) })

	p.waitText("Resume a session of this directory")
	p.waitText("fix the parser")
	p.waitText("add the tests")
	screen := p.screen()
	if strings.Index(screen, "add the tests") > strings.Index(screen, "fix the parser") {
		t.Fatalf("not newest first:\n%s", screen)
	}
	p.keys("/")
	p.text("parser")
	p.wait("the filter to hide the other session", func(s string) bool { return !strings.Contains(s, "add the tests") })
	p.keys("Enter") // ends the filter
	p.keys("Enter") // resumes the session
	p.waitText("restored: yes")
	p.waitText("> fix the parser")
	p.waitText("The parser is fixed.")
	p.waitText("── resumed ──")
	p.keys("C-c", "C-c") // on an empty idle prompt: the second exits
	p.waitText("EXIT=0")
}

// Without a terminal --resume says how to resume instead.
func TestResumeWithoutATerminal(t *testing.T) {
	c := newCLI(t, nil)
	code, _, stderr := c.main("", "--resume")
	if code == 0 || !strings.Contains(stderr, "--resume needs a terminal") || !strings.Contains(stderr, "--session <id>") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = c.main("", "--resume", "--continue")
	if code == 0 || !strings.Contains(stderr, "--resume cannot be used with --session or --continue") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

// Forks say what they are in the picker: the source's short id and the
// turn; their source says nothing.
func TestForkLabel(t *testing.T) {
	c, id, _ := threeTurns(t)
	_ = c.rewind(id, "--turn", "2", "--conversation-only")
	code, out, stderr := c.main("", "session", "fork", id)
	if code != 0 {
		t.Fatal(stderr)
	}
	seqFork := strings.TrimSpace(out[strings.LastIndex(out, "--session ")+len("--session "):])
	labels := map[string]string{}
	for _, p := range c.sessions() {
		labels[filepath.Base(p)] = interactive.ForkLabel(p)
	}
	var got []string
	for name, l := range labels {
		switch {
		case strings.Contains(name, id):
			if l != "" {
				t.Errorf("the source is labelled %q", l)
			}
		case strings.Contains(name, seqFork):
			got = append(got, "seq: "+l)
		default:
			got = append(got, "rewind: "+l)
		}
	}
	sort.Strings(got)
	want := []string{"rewind: fork of " + id[:8] + " at turn 2", "seq: fork of " + id[:8] + " at turn 3"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("labels %q, want %q", got, want)
	}
}
