package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// /rewind in a real terminal: two turns change files, /rewind lists them,
// a number previews, y rewinds files and conversation, the rewound prompt
// is offered in the input, and the conversation goes on in the fork.
func TestRewindInRealTerminal(t *testing.T) {
	needTmux(t)
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "write", `{"path":"a.txt","content":"first\n"}`)}},
		providertest.Reply{Text: "wrote a"},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c2", "bash", `{"command":"echo second > a.txt; mkdir -p out; echo b > out/b.txt"}`)}},
		providertest.Reply{Text: "changed a, made b"},
		providertest.Reply{Text: "answered in the fork"},
	)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("original\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := programAs(t, "tiny-go")
	p := &tmuxPane{t: t, socket: fmt.Sprintf("tinygo-rewind-%d", os.Getpid())}
	script := fmt.Sprintf(`cd %s && TERM=tmux-256color OPENROUTER_API_KEY=k OTEL_SDK_DISABLED=true TINY_ENDPOINT=%s %s --approval auto; echo EXIT=$?; sleep 60`, dir, srv.URL(), bin)
	p.tmux("new-session", "-d", "-x", "120", "-y", "40", "-s", "s", "sh", "-c", script)
	t.Cleanup(func() { killTmux(p.socket) })
	p.waitText("Ctrl+C clears a draft")

	p.text("write a")
	p.keys("Enter")
	p.waitText("wrote a")
	p.text("change a")
	p.keys("Enter")
	p.waitText("changed a, made b")

	p.text("/rewind")
	p.keys("Enter")
	p.waitText("Type a turn number")
	p.text("2")
	p.keys("Enter")
	p.waitText("Rewind? y to do it")
	for _, want := range []string{"restore   a.txt", "delete    out/b.txt", "The conversation goes back to before turn 2"} {
		if !strings.Contains(p.screen(), want) {
			t.Fatalf("preview lacks %q:\n%s", want, p.screen())
		}
	}
	p.text("y")
	p.keys("Enter")
	p.waitText("Now in session ")
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "first\n" {
		t.Fatalf("a.txt = %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
		t.Fatal("out/ is still there")
	}
	// The rewound prompt is in the input; sending it continues the fork.
	p.waitText("> change a")
	p.keys("Enter")
	p.waitText("answered in the fork")
	p.keys("C-c", "C-c") // on an empty idle prompt: the second exits
	p.waitText("EXIT=0")
	screen := p.screen()
	i := strings.Index(screen, "Now in session ")
	forkID := strings.TrimSuffix(strings.Fields(screen[i+len("Now in session "):])[0], ":")
	if !strings.Contains(screen, "Resume: tiny-go --session "+forkID) {
		t.Fatalf("resume hint does not name the fork %s:\n%s", forkID, screen)
	}
	_, data, err := store.ReadByID(dir, forkID)
	if err != nil {
		t.Fatal(err)
	}
	if turns := sessionTurns(data); len(turns) != 2 || turns[1].Prompt != "change a" {
		t.Fatalf("fork turns %+v", turns)
	}
}
