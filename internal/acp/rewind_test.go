package acp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

func writeCall(id, path, content string) providertest.Reply {
	return providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: id, Name: "write", Arguments: `{"path":"` + path + `","content":"` + content + `"}`}}}
}

// /rewind lists the turns; /rewind N shows what it would do, asks, and
// puts the files back, the conversation continuing in a fork as in the
// terminal.
func TestRewindCommand(t *testing.T) {
	srv := providertest.New(t,
		writeCall("c1", "a.txt", "one"), providertest.Reply{Text: "wrote one"},
		writeCall("c2", "a.txt", "two"), providertest.Reply{Text: "wrote two"},
		providertest.Reply{Text: "after the rewind"},
	)
	dir := t.TempDir()
	p := startAgent(t, srv, dir, "--approval", "auto")
	p.initialize()
	id := p.newSession()
	prompt := func(text string) string {
		t.Helper()
		resp, notes := p.call("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": text}}})
		if resp["error"] != nil {
			t.Fatalf("prompt %s: %v", text, resp["error"])
		}
		return answerText(notes) + dump(notes)
	}
	prompt("first")
	prompt("second")
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "two" {
		t.Fatalf("a.txt %q", b)
	}
	if out := prompt("/rewind"); !strings.Contains(out, "1. first") || !strings.Contains(out, "2. second") {
		t.Fatalf("/rewind lists: %s", out)
	}
	p.answer = "allow_once"
	out := prompt("/rewind 2")
	if len(p.asked) != 1 || !strings.Contains(dump(p.asked[0]), "Rewind to before turn 2") {
		t.Fatalf("asked: %v", p.asked)
	}
	if !strings.Contains(out, `"status":"completed"`) {
		t.Fatalf("rewind updates: %s", out)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "one" {
		t.Fatalf("a.txt after the rewind: %q", b)
	}
	files, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "sessions", "*.jsonl"))
	if len(files) != 2 {
		t.Fatalf("%d session files, want the original and its fork", len(files))
	}
	// The session goes on (in the fork) under the id the editor knows.
	if out := prompt("go on"); !strings.Contains(out, "after the rewind") {
		t.Fatalf("after the rewind: %s", out)
	}
}
