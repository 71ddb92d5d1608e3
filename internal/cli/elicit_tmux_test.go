package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/mcp"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// TestElicitationFormInATerminal runs the real program in tmux against a
// stateful TypeScript-SDK server whose tool asks for a form of every field
// kind. The user fills it in (a bad number is refused under its field
// first), and the server gets typed values; then Ctrl+D declines and Esc
// cancels, and the server hears each.
func TestElicitationFormInATerminal(t *testing.T) {
	needTmux(t)
	url := startTSMCPServer(t, "stateful")
	ask, _ := mcp.ToolName("ts", "ask_form")
	call := func(id string) providertest.Reply {
		return providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall(id, ask, `{}`)}}
	}
	srv := providertest.New(t,
		call("c1"), providertest.Reply{Text: "done one"},
		call("c2"), providertest.Reply{Text: "done two"},
		call("c3"), providertest.Reply{Text: "done three"},
	)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(`{"mcpServers":{"ts":{"type":"http","url":"`+url+`"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := programAs(t, "tiny-go")
	env := fmt.Sprintf("TERM=tmux-256color OPENROUTER_API_KEY=k OTEL_SDK_DISABLED=true TINY_ENDPOINT=%s", srv.URL())
	p := &tmuxPane{t: t, socket: fmt.Sprintf("tinygo-elicit-%d", os.Getpid())}
	script := fmt.Sprintf(`cd %s && env %s %s --mcp ts --approval auto`, dir, env, bin)
	p.tmux("new-session", "-d", "-x", "120", "-y", "40", "-s", "s", "sh", "-c", script+"; echo EXIT=$?; sleep 60")
	t.Cleanup(func() { killTmux(p.socket) })
	p.waitText("/compact  /skill:name  /exit")
	result := func(n int) string {
		t.Helper()
		reqs := srv.Requests()
		msgs := reqs[2*n-1].Chat.Messages
		m := msgs[len(msgs)-1]
		if m.Role != "tool" || m.Content == nil {
			t.Fatalf("the model was sent %+v", m)
		}
		return *m.Content
	}

	p.text("one")
	p.keys("Enter")
	p.waitText("◆ MCP ts asks: Set up the project")
	// The Go SDK hands the schema over as a map: fields come sorted by name.
	p.waitText("› Owner email *")
	p.waitText("Project name *  demo")
	p.waitText("Features        [x] ci  [ ] docs  [ ] lint")
	p.text("ada@example.com")
	p.keys("Tab", "Right", "Space", "Tab") // features: docs too
	p.keys("C-u")
	p.text("tiny")
	p.keys("Tab", "y", "Tab") // name, then public: yes
	p.text("a lot")
	p.keys("Tab") // ratio: refused once left
	p.waitText("✗ Ratio: a number, please")
	p.keys("BTab", "C-u")
	p.text("0.25")
	p.keys("Tab", "Right", "Tab", "C-u") // region: United States
	p.text("5")
	p.keys("Tab", "Right", "Right", "Enter") // replicas, then tier: pro; Enter sends
	p.waitText("└ sent Owner email=ada@example.com, Features=ci, docs, Project name=tiny, Public=true, Ratio=0.25, Region=us,")
	p.waitText("done one")
	want := `action=accept content={"email":"ada@example.com","features":["ci","docs"],"name":"tiny","public":true,"ratio":0.25,"region":"us","replicas":5,"tier":"pro"}`
	if got := result(1); got != want {
		t.Fatalf("the server answered %q, want %q", got, want)
	}

	p.text("two")
	p.keys("Enter")
	p.waitCount("◆ MCP ts asks: Set up the project", 2)
	p.keys("C-d")
	p.waitText("done two")
	if got := result(2); got != "action=decline content=null" {
		t.Fatalf("decline: the server answered %q", got)
	}

	p.text("three")
	p.keys("Enter")
	p.waitCount("◆ MCP ts asks: Set up the project", 3)
	p.keys("Escape")
	p.waitText("done three")
	if got := result(3); got != "action=cancel content=null" {
		t.Fatalf("cancel: the server answered %q", got)
	}
	if s := p.screen(); !strings.Contains(s, "└ declined") || !strings.Contains(s, "└ cancelled") {
		t.Errorf("the answers are not in the scrollback:\n%s", s)
	}
	p.keys("C-c", "C-c") // on an empty idle prompt: the second exits
	p.waitText("EXIT=0")
}
