package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// TestInteractiveChainEsc runs the real program in tmux: a task whose
// context overflows goes on through "Compacting" by itself, and Esc while
// the summary request is in flight aborts the compaction and ends the
// chain; the next prompt is an ordinary run.
func TestInteractiveChainEsc(t *testing.T) {
	needTmux(t)
	overflow := providertest.Reply{Status: 400, Body: `{"error":{"message":"This model's maximum context length is 4096 tokens.","code":"context_length_exceeded"}}`}
	var replies []providertest.Reply
	for i := 1; i <= 4; i++ {
		replies = append(replies, providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall(fmt.Sprintf("c%d", i), "read", `{"path":"a.txt"}`)}})
	}
	replies = append(replies, overflow, providertest.Reply{Hang: true}, providertest.Reply{Text: "an ordinary answer"})
	srv := providertest.New(t, replies...)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := programAs(t, "tiny-go")
	p := &tmuxPane{t: t, socket: fmt.Sprintf("tinygo-chain-%d", os.Getpid())}
	script := fmt.Sprintf(`cd %s && TERM=tmux-256color OPENROUTER_API_KEY=k OTEL_SDK_DISABLED=true TINY_ENDPOINT=%s %s --approval auto; echo EXIT=$?; sleep 60`, dir, srv.URL(), bin)
	p.tmux("new-session", "-d", "-x", "110", "-y", "40", "-s", "s", "sh", "-c", script)
	t.Cleanup(func() { killTmux(p.socket) })

	p.waitText("Ctrl+C clears a draft")
	p.text("do the long task")
	p.keys("Enter")
	p.waitCount("◆ read a.txt", 4)
	p.waitText("Compacting")
	p.wait("the summary request", func(string) bool { return len(srv.Requests()) >= 6 })
	if strings.Contains(p.screen(), "Failed") {
		t.Fatalf("the context_limit run showed as a failure:\n%s", p.screen())
	}
	p.keys("Escape")
	p.waitText("Aborted.")

	st := reduceOnly(t, dir)
	if !st.Idle() || st.ContinuationOwed {
		t.Fatalf("after Esc: idle %v, continuation owed %v", st.Idle(), st.ContinuationOwed)
	}
	p.text("and now?")
	p.keys("Enter")
	p.waitText("an ordinary answer")
	p.keys("C-c", "C-c") // on an empty idle prompt: the second exits
	p.waitText("EXIT=0")

	b, _ := os.ReadFile(sessionFiles(t, dir)[0])
	file := string(b)
	for _, want := range []string{`"code":"context_limit"`, `"phase":"compact"`} {
		if !strings.Contains(file, want) {
			t.Errorf("session file lacks %s", want)
		}
	}
	if strings.Contains(file, agentContinuePrompt) {
		t.Error("a continuation run started after Esc")
	}
}
