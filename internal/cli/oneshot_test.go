package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/testenv"
)

// One-shot mode streams the answer to stdout as it arrives — the text
// before a tool call included — while the tool log goes to stderr: the
// first words of an answer whose stream has not ended are already out.
func TestOneShotStreamsTheAnswer(t *testing.T) {
	srv := providertest.New(t,
		providertest.Reply{Text: "Let me look first.", ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", `{"command":"echo hi"}`)}},
		// The answer's stream stops after a few pieces and never ends.
		providertest.Reply{Text: "The first words of the answer, then more that never come.", ChunkSize: 6, Hang: true, After: 4},
	)
	c := newCLI(t, srv)
	cmd := c.command(srv.URL(), "--cwd", c.dir, "look around")
	stdoutPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr testenv.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	copied := make(chan struct{})
	go func() { _, _ = io.Copy(&stdout, stdoutPipe); close(copied) }()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(stdout.String(), "The first") {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the answer's first words never reached stdout:\nstdout %q\nstderr %q", stdout.String(), stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if cmd.ProcessState != nil {
		t.Fatal("the process had already ended")
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	<-copied
	_ = cmd.Wait()

	out := stdout.String()
	if !strings.HasPrefix(out, "Let me look first.\n\nThe first") {
		t.Errorf("stdout: %q", out)
	}
	if strings.Contains(out, "never come") {
		t.Errorf("stdout holds text that was never streamed: %q", out)
	}
	errOut := stderr.String()
	for _, want := range []string{"◆ bash echo hi\n  └ 3 chars\n    hi\n", "Aborted."} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "Let me look") || strings.ContainsAny(errOut, "⠋⠙⠹\x1b") {
		t.Errorf("stderr holds answer text, a spinner or colour though it is not a terminal:\n%q", errOut)
	}
}

// With stderr on a terminal, one-shot mode animates a spinner with the
// elapsed time while it waits, and leaves nothing of it behind.
func TestOneShotSpinnerInATerminal(t *testing.T) {
	needTmux(t)
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", `{"command":"sleep 2; echo slept"}`)}},
		providertest.Reply{Text: "All done.", Delay: 1500 * time.Millisecond},
	)
	dir := t.TempDir()
	bin := programAs(t, "tiny-go")
	p := &tmuxPane{t: t, socket: fmt.Sprintf("tinygo-spin-%d", os.Getpid())}
	script := fmt.Sprintf(`cd %s && TERM=tmux-256color OPENROUTER_API_KEY=k OTEL_SDK_DISABLED=true TINY_ENDPOINT=%s %s "sleep a bit"; echo EXIT=$?; sleep 60`, dir, srv.URL(), bin)
	p.tmux("new-session", "-d", "-x", "100", "-y", "30", "-s", "s", "sh", "-c", script)
	t.Cleanup(func() { killTmux(p.socket) })
	p.waitText("Running bash… 1s")
	p.waitText("  └ 6 chars · 2")
	p.waitText("Thinking… 1s")
	p.waitText("EXIT=0")
	screen := p.screen()
	if !strings.Contains(screen, "All done.") {
		t.Fatalf("no answer:\n%s", screen)
	}
	if strings.Contains(screen, "…") && strings.Contains(screen, "Thinking") {
		t.Fatalf("a spinner frame was left behind:\n%s", screen)
	}
}
