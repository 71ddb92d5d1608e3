package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// Interactive mode honours Claude Code's permission flags (issue 41):
// --permission-mode acceptEdits runs a file command in the working
// directory without asking and asks about another command;
// --dangerously-skip-permissions asks about nothing, here in the same
// session resumed with -r ID.
func TestPermissionFlagsInATerminal(t *testing.T) {
	needTmux(t)
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{bashAs("c1", "mkdir sub && touch sub/a.txt")}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{bashAs("c2", "echo hi > b.txt")}},
		providertest.Reply{Text: "edits done"},
		providertest.Reply{ToolCalls: []providertest.ToolCall{bashAs("c3", "echo bypass > c.txt")}},
		providertest.Reply{Text: "bypass done"},
	)
	dir := t.TempDir()
	bin := programAs(t, "tiny-go")
	exists := func(name string) bool { _, err := os.Stat(filepath.Join(dir, name)); return err == nil }
	run := func(name, flags string) *tmuxPane {
		p := &tmuxPane{t: t, socket: fmt.Sprintf("tinygo-perm-%s-%d", name, os.Getpid())}
		script := fmt.Sprintf(`cd %s && TERM=tmux-256color OPENROUTER_API_KEY=k OTEL_SDK_DISABLED=true TINY_ENDPOINT=%s %s %s; sleep 60`, dir, srv.URL(), bin, flags)
		p.tmux("new-session", "-d", "-x", "120", "-y", "30", "-s", "s", "sh", "-c", script)
		t.Cleanup(func() { killTmux(p.socket) })
		p.waitText("/compact  /skill:name  /exit")
		return p
	}

	p := run("edits", "--permission-mode acceptEdits")
	p.waitText("accept edits")
	p.text("make files")
	p.keys("Enter")
	p.waitText("echo hi > b.txt")
	if !exists("sub/a.txt") {
		t.Fatalf("the file command did not run before the question:\n%s", p.screen())
	}
	if n := strings.Count(p.screen(), "wants to: Run a command"); n != 1 {
		t.Fatalf("%d questions; want one, about echo:\n%s", n, p.screen())
	}
	p.keys("y")
	p.waitText("edits done")
	if !exists("b.txt") {
		t.Fatal("y did not run the command")
	}

	p.text("/exit")
	p.keys("Enter")
	p.waitText("Resume: tiny-go --session")
	files, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "sessions", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("sessions %v", files)
	}
	_, id, _ := strings.Cut(strings.TrimSuffix(filepath.Base(files[0]), ".jsonl"), "_")
	q := run("skip", "-r "+id+" --dangerously-skip-permissions")
	q.waitText("auto mode")
	q.waitText("edits done") // the resumed session's last turn
	q.text("more")
	q.keys("Enter")
	q.waitText("bypass done")
	if !exists("c.txt") || strings.Contains(q.screen(), "wants to:") {
		t.Fatalf("--dangerously-skip-permissions asked, or did not run:\n%s", q.screen())
	}
	if files, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "sessions", "*.jsonl")); len(files) != 1 {
		t.Fatalf("-r %s made another session: %v", id, files)
	}
}
