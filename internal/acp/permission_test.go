package acp_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

func bashCall(id, command string) providertest.Reply {
	return providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: id, Name: "bash", Arguments: `{"command":"` + command + `"}`}}}
}

// "Allow always" lasts for the session, beyond the process (it is kept
// beside the session, as in the terminal); "reject always" refuses the
// same kind of call for the rest of the connection without asking.
func TestPermissionAlwaysAnswers(t *testing.T) {
	srv := providertest.New(t,
		bashCall("c1", "touch x"), providertest.Reply{Text: "1"},
		bashCall("c2", "touch y"), providertest.Reply{Text: "2"},
		bashCall("c3", "rm -f x"), providertest.Reply{Text: "3"},
		bashCall("c4", "rm -f y"), providertest.Reply{Text: "4"},
		bashCall("c5", "touch z"), providertest.Reply{Text: "5"},
	)
	dir := t.TempDir()
	p := startAgent(t, srv, dir)
	p.initialize()
	id := p.newSession()
	prompt := func(p *agentProc, text string) {
		t.Helper()
		resp, _ := p.call("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": text}}})
		if resp["error"] != nil {
			t.Fatalf("prompt %s: %v", text, resp["error"])
		}
	}
	p.answer = "allow_always"
	prompt(p, "one")
	prompt(p, "two") // covered by the rule: not asked
	if len(p.asked) != 1 {
		t.Fatalf("%d questions after an allow-always, want 1", len(p.asked))
	}
	p.answer = "reject_always"
	prompt(p, "three")
	prompt(p, "four") // covered by the rejection: not asked, not run
	if len(p.asked) != 2 {
		t.Fatalf("%d questions after a reject-always, want 2", len(p.asked))
	}
	for name, want := range map[string]bool{"x": true, "y": true} {
		if _, err := os.Stat(filepath.Join(dir, name)); (err == nil) != want {
			t.Fatalf("%s exists: %v", name, err == nil)
		}
	}
	_ = p.stdin.Close()
	<-p.done

	// A new process loads the session: the allow-always rule still holds.
	q := startAgent(t, srv, dir)
	q.initialize()
	resp, _ := q.call("session/load", map[string]any{"sessionId": id, "cwd": dir, "mcpServers": []any{}})
	if resp["error"] != nil {
		t.Fatalf("load: %v", resp)
	}
	q.answer = "reject_once"
	prompt(q, "five")
	if len(q.asked) != 0 {
		t.Fatalf("asked again after a load: %v", q.asked)
	}
	if _, err := os.Stat(filepath.Join(dir, "z")); err != nil {
		t.Fatal("the allowed command did not run after the load")
	}
}
