package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// TestApprovalsInATerminal runs the real program in tmux in its default
// interactive approval mode (ask): y allows once, a allows `echo` commands
// for the session, n denies with a reason, Esc aborts while waiting, and a
// SIGKILL while waiting leaves the call unrun and unrecorded, so that the
// resume asks again.
func TestApprovalsInATerminal(t *testing.T) {
	needTmux(t)
	var long strings.Builder
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&long, "line %d of the new file\n", i)
	}
	longContent := long.String()
	bash := func(id, cmd string) providertest.Reply {
		return providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall(id, "bash", fmt.Sprintf(`{"command":%q}`, cmd))}}
	}
	srv := providertest.New(t,
		bash("c1", "echo y > y.txt"),
		providertest.Reply{Text: "done one"},
		bash("c2", "echo a1 > a1.txt"),
		bash("c3", "echo a2 > a2.txt"),
		providertest.Reply{Text: "done two"},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c4", "write", fmt.Sprintf(`{"path":"w.txt","content":%q}`, longContent))}},
		providertest.Reply{Text: "understood three"},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c5", "edit", `{"path":"notes.txt","edits":[{"oldText":"beta","newText":"BETA"}]}`)}},
		bash("c6", "touch killed.txt"),
		providertest.Reply{Text: "done five"},
	)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("alpha\nbeta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := programAs(t, "tiny-go")
	env := fmt.Sprintf("TERM=tmux-256color OPENROUTER_API_KEY=k OTEL_SDK_DISABLED=true TINY_ENDPOINT=%s", srv.URL())
	p := &tmuxPane{t: t, socket: fmt.Sprintf("tinygo-approval-%d", os.Getpid())}
	script := fmt.Sprintf(`cd %s && echo $$ > tg.pid && exec env %s %s`, dir, env, bin)
	p.tmux("new-session", "-d", "-x", "100", "-y", "30", "-s", "s", "sh", "-c", script+"; sleep 60")
	t.Cleanup(func() { killTmux(p.socket) })
	exists := func(name string) bool { _, err := os.Stat(filepath.Join(dir, name)); return err == nil }

	p.waitText("/compact  /skill:name  /exit")

	// y: allowed once, runs.
	p.text("one")
	p.keys("Enter")
	p.waitText("Allow bash? y allow once · a always allow `echo` commands · n deny · Esc abort")
	p.waitText("    echo y > y.txt")
	if exists("y.txt") {
		t.Fatal("the command ran before the answer")
	}
	p.keys("y")
	p.waitText("done one")
	if !exists("y.txt") {
		t.Fatal("y did not run the command")
	}

	// a: `echo` commands run without asking for the rest of the session.
	p.text("two")
	p.keys("Enter")
	p.waitText("echo a1 > a1.txt")
	p.keys("a")
	p.waitText("done two")
	if !exists("a1.txt") || !exists("a2.txt") {
		t.Fatal("a did not run both commands")
	}
	if n := strings.Count(p.screen(), "wants to: Run a command"); n != 2 {
		t.Fatalf("asked %d times about commands, want 2 (y, then a once):\n%s", n, p.screen())
	}

	// n with a reason: a diff is shown, the write is denied, the model is told.
	p.text("three")
	p.keys("Enter")
	// The diff is longer than the screen: all of it is in the scrollback,
	// and the question stays on screen, also after a resize.
	p.waitText("◆ write wants to: Create w.txt")
	p.waitText("+line 60 of the new file")
	p.waitText("+line 1 of the new file")
	p.tmux("resize-window", "-t", "s", "-x", "60", "-y", "20")
	p.wait("the question after the resize", func(string) bool {
		visible := p.tmux("capture-pane", "-p", "-t", "s")
		return strings.Contains(visible, "Allow write? y allow once") && strings.Contains(visible, "Waiting for your approval")
	})
	p.keys("n")
	p.waitText("Why not? Optional; Enter denies, Esc aborts.")
	p.text("not in this repo")
	p.keys("Enter")
	p.waitText("understood three")
	if exists("w.txt") {
		t.Fatal("the denied write happened")
	}
	reqs := srv.Requests()
	last := reqs[len(reqs)-1].Chat.Messages
	if m := last[len(last)-1]; m.Role != "tool" || m.Content == nil || *m.Content != "Error: The user denied this tool call; it was not executed.\nReason given by the user: not in this repo" {
		t.Fatalf("the model was sent %+v", m)
	}

	// Esc while waiting aborts the operation; the edit never starts.
	p.text("four")
	p.keys("Enter")
	p.waitText("-beta")
	p.waitText("+BETA")
	p.keys("Escape")
	p.waitText("Aborted.")
	if b, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(b) != "alpha\nbeta\n" {
		t.Fatalf("notes.txt = %q after Esc", b)
	}
	file := sessionText(t, dir)
	for _, want := range []string{`"phase":"tool","reason":"escape","toolCallId":"c5"`, `"reason":"aborted"`} {
		if !strings.Contains(file, want) {
			t.Errorf("session lacks %s:\n%s", want, file)
		}
	}
	if toolStartedFor(file, "c5") {
		t.Error("the aborted edit has a toolStarted")
	}

	// SIGKILL while waiting: nothing of the call is recorded or run.
	p.text("five")
	p.keys("Enter")
	p.waitText("touch killed.txt")
	var pid int
	if b, err := os.ReadFile(filepath.Join(dir, "tg.pid")); err == nil {
		fmt.Sscan(strings.TrimSpace(string(b)), &pid)
	}
	if pid == 0 {
		t.Fatal("no pid of tiny-go")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The pane's process was tiny-go itself: its server may be gone already.
	_ = exec.Command("tmux", "-L", p.socket, "kill-server").Run()
	if exists("killed.txt") {
		t.Fatal("the unapproved command ran")
	}
	if toolStartedFor(sessionText(t, dir), "c6") {
		t.Fatal("toolStarted of the unapproved call is in the session")
	}
	id := reduceOnly(t, dir).Header.ID

	// The resume asks again (before the UI starts), and y runs it.
	p2 := &tmuxPane{t: t, socket: p.socket + "-resume"}
	p2.tmux("new-session", "-d", "-x", "100", "-y", "30", "-s", "s", "sh", "-c",
		fmt.Sprintf(`cd %s && env %s %s --session %s; echo EXIT=$?; sleep 60`, dir, env, bin, id))
	t.Cleanup(func() { killTmux(p2.socket) })
	p2.waitText("◆ bash wants to: Run a command (asked again after a restart)")
	p2.waitText("Allow? y = once, a = always allow `touch` commands, n [reason] = deny, esc = abort:")
	if exists("killed.txt") {
		t.Fatal("the resume ran the call before asking")
	}
	p2.text("y")
	p2.keys("Enter")
	p2.waitText("Recovered the open run: completed.")
	p2.waitText("/compact  /skill:name  /exit")
	if !exists("killed.txt") {
		t.Fatal("the approved call did not run on resume")
	}
	p2.keys("C-c", "C-c") // on an empty idle prompt: the second exits
	p2.waitText("EXIT=0")
	if st := reduceOnly(t, dir); !st.Idle() {
		t.Fatal("an operation is still open")
	}
}

func sessionText(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(sessionFiles(t, dir)[0])
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return string(b)
}

// toolStartedFor reports whether the session text has a toolStarted for
// the call id.
func toolStartedFor(file, callID string) bool {
	for _, line := range strings.Split(file, "\n") {
		if strings.Contains(line, `"type":"toolStarted"`) && strings.Contains(line, `"toolCallId":"`+callID+`"`) {
			return true
		}
	}
	return false
}
