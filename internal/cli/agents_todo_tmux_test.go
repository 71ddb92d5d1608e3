package cli

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

func todoArgs(items ...[2]string) string {
	var b strings.Builder
	b.WriteString(`{"todos":[`)
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"content":%q,"status":%q,"activeForm":%q}`, it[0], it[1], "Doing "+it[0])
	}
	b.WriteString(`]}`)
	return b.String()
}

// TestTodoListTmux: the model's todo list is on the screen as it changes,
// and a resumed session shows the list its last todo_write call set.
func TestTodoListTmux(t *testing.T) {
	needTmux(t)
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("t1", "todo_write", todoArgs([2]string{"survey", "in_progress"}, [2]string{"patch", "pending"}))}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("b1", "bash", `{"command":"while [ ! -e $MARKS/go ]; do sleep 0.05; done"}`)}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("t2", "todo_write", todoArgs([2]string{"survey", "completed"}, [2]string{"patch", "in_progress"}))}},
		providertest.Reply{Text: "all planned"},
	)
	// The command waits for a file outside the tree: over the overlay, a
	// name created in the tree while it runs may stay hidden from it.
	dir, marks := t.TempDir(), t.TempDir()
	bin := programAs(t, "tiny-go")
	p := &tmuxPane{t: t, socket: fmt.Sprintf("tinygo-todo-%d", os.Getpid())}
	script := fmt.Sprintf(`cd %s && MARKS=%s TERM=tmux-256color OPENROUTER_API_KEY=k OTEL_SDK_DISABLED=true TINY_ENDPOINT=%s %s --approval auto; echo EXIT=$?; sleep 60`, dir, marks, srv.URL(), bin)
	p.tmux("new-session", "-d", "-x", "110", "-y", "40", "-s", "s", "sh", "-c", script)
	t.Cleanup(func() { killTmux(p.socket) })
	p.waitText("/compact  /skill:name  /exit")
	p.text("plan the work")
	p.keys("Enter")
	// While the command runs, the live area holds the list: the task in
	// progress by its active form, above the status line.
	p.waitText("Running bash")
	screen := p.screen()
	live := screen[strings.LastIndex(screen, "◆ bash"):]
	if !strings.Contains(live, "[>] Doing survey\n[ ] patch\n") {
		t.Fatalf("the live area lacks the list:\n%s", screen)
	}
	if err := os.WriteFile(marks+"/go", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	p.waitText("all planned")
	p.waitText("[x] survey")
	p.keys("C-c", "C-c")
	p.waitText("EXIT=0")

	q := &tmuxPane{t: t, socket: fmt.Sprintf("tinygo-todo-resume-%d", os.Getpid())}
	script = fmt.Sprintf(`cd %s && TERM=tmux-256color OPENROUTER_API_KEY=k OTEL_SDK_DISABLED=true TINY_ENDPOINT=%s %s --approval auto --continue; echo EXIT=$?; sleep 60`, dir, srv.URL(), bin)
	q.tmux("new-session", "-d", "-x", "110", "-y", "40", "-s", "s", "sh", "-c", script)
	t.Cleanup(func() { killTmux(q.socket) })
	q.waitText("Todo list:\n[x] survey\n[>] Doing patch")
	q.keys("C-c", "C-c")
	q.waitText("EXIT=0")
}

// TestTodoListOneShot: a one-shot run shows each change of the list on
// stderr, and its stdout stays the answer.
func TestTodoListOneShot(t *testing.T) {
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("t1", "todo_write", todoArgs([2]string{"survey", "in_progress"}, [2]string{"patch", "pending"}))}},
		providertest.Reply{Text: "done"},
	)
	code, stdout, stderr, _ := runProgram(t, srv, "go")
	if code != 0 || strings.TrimSpace(stdout) != "done" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "todo list: 0 of 2 done") || !strings.Contains(stderr, "[>] Doing survey") || !strings.Contains(stderr, "[ ] patch") {
		t.Fatalf("stderr lacks the list:\n%s", stderr)
	}
	// The model hears that the list took.
	if got := srv.Requests()[1].Chat.Messages; !strings.Contains(*got[len(got)-1].Content, "Todo list updated") {
		t.Fatalf("the tool result is %q", *got[len(got)-1].Content)
	}
}
