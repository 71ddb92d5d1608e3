package acp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// Reasoning streams as agent_thought_chunk, never as the answer; a reply
// cut off by the model's token limit ends with max_tokens; an embedded
// resource (an @-mention with the editor's text) reaches the model.
func TestPromptThoughtsAndMaxTokens(t *testing.T) {
	srv := providertest.New(t,
		providertest.Reply{Reasoning: "Let me think.", Text: "Thought about it."},
		providertest.Reply{Text: "A long answer that", FinishReason: "length"},
	)
	p := startAgent(t, srv, t.TempDir(), "--approval", "auto")
	p.initialize()
	id := p.newSession()
	resp, notes := p.call("session/prompt", map[string]any{"sessionId": id, "prompt": []any{
		map[string]any{"type": "text", "text": "look at "},
		map[string]any{"type": "resource", "resource": map[string]any{"uri": "file:///src/main.go", "text": "package main // unsaved"}},
	}})
	if resp["result"].(map[string]any)["stopReason"] != "end_turn" {
		t.Fatalf("prompt: %v", resp)
	}
	var thought strings.Builder
	for _, m := range notes {
		u := m["params"].(map[string]any)["update"].(map[string]any)
		if u["sessionUpdate"] == "agent_thought_chunk" {
			thought.WriteString(u["content"].(map[string]any)["text"].(string))
		}
	}
	if thought.String() != "Let me think." || answerText(notes) != "Thought about it." {
		t.Fatalf("thought %q, answer %q", thought.String(), answerText(notes))
	}
	reqs := srv.Requests()
	if len(reqs) == 0 || !strings.Contains(string(reqs[0].Body), "package main // unsaved") || !strings.Contains(string(reqs[0].Body), "file:///src/main.go") {
		t.Fatal("the embedded resource did not reach the model")
	}
	resp, _ = p.call("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "go on"}}})
	if r, _ := resp["result"].(map[string]any); r["stopReason"] != "max_tokens" {
		t.Fatalf("prompt: %v", resp)
	}
	// Images are not offered (promptCapabilities.image is false).
	resp, _ = p.call("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "image", "data": "AAAA", "mimeType": "image/png"}}})
	if errorCode(t, resp) != -32602 || !strings.Contains(dump(resp), "images") {
		t.Fatalf("image prompt: %v", resp)
	}
}

// Prompts that follow each other at once all run to their end: what
// watches one prompt's request never cancels the next.
func TestPromptsInQuickSuccession(t *testing.T) {
	const n = 40
	replies := make([]providertest.Reply, n)
	for i := range replies {
		replies[i] = providertest.Reply{Text: "ok"}
	}
	p := startAgent(t, providertest.New(t, replies...), t.TempDir(), "--approval", "auto")
	p.initialize()
	id := p.newSession()
	for i := range n {
		resp, _ := p.call("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "go"}}})
		if r, _ := resp["result"].(map[string]any); r["stopReason"] != "end_turn" {
			t.Fatalf("prompt %d: %v", i+1, resp)
		}
	}
}

// A session's directory's settings file counts, as for a run started
// there: its model is the one asked for.
func TestSessionUsesTheProjectSettings(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Text: "configured"})
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".tiny-agent"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".tiny-agent", "config.toml"), []byte("model = \"test/from-project-file\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startAgentEnv(t, srv, dir, []string{"XDG_CONFIG_HOME=" + t.TempDir(), "TINY_MODEL="}, "--approval", "auto")
	p.initialize()
	id := p.newSession()
	resp, notes := p.call("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}})
	if resp["result"] == nil || answerText(notes) != "configured" {
		t.Fatalf("prompt: %v", resp)
	}
	if reqs := srv.Requests(); len(reqs) == 0 || reqs[0].Chat.Model != "test/from-project-file" {
		t.Fatalf("the model asked for is not the settings file's: %+v", reqs)
	}
}

// The directory's custom commands are announced beside the built-ins and
// run as the terminal runs them: the file's body with the arguments.
func TestCustomCommands(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Text: "reviewed"})
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".tiny-agent", "commands"), 0o700); err != nil {
		t.Fatal(err)
	}
	body := "---\ndescription: Review one file\n---\nReview $1 carefully.\n"
	if err := os.WriteFile(filepath.Join(dir, ".tiny-agent", "commands", "review.md"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startAgentEnv(t, srv, dir, []string{"HOME=" + t.TempDir()}, "--approval", "auto")
	p.initialize()
	id := p.newSession()
	u := p.waitUpdate("available_commands_update")
	found := false
	for _, c := range u["availableCommands"].([]any) {
		c := c.(map[string]any)
		if c["name"] == "review" && c["description"] == "Review one file" {
			found = true
		}
	}
	if !found {
		t.Fatalf("review is not announced: %v", u)
	}
	resp, notes := p.call("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "/review main.go"}}})
	if resp["result"] == nil || answerText(notes) != "reviewed" {
		t.Fatalf("prompt: %v", resp)
	}
	if reqs := srv.Requests(); len(reqs) == 0 || !strings.Contains(string(reqs[0].Body), "Review main.go carefully.") {
		t.Fatal("the expanded command did not reach the model")
	}
}

// The terminal's read-only commands are offered to the editor and answer
// with the session's state, without a request to the model.
func TestInfoCommandsOverACP(t *testing.T) {
	srv := providertest.New(t)
	dir := t.TempDir()
	p := startAgentEnv(t, srv, dir, []string{"HOME=" + t.TempDir()}, "--approval", "auto")
	p.initialize()
	id := p.newSession()
	u := p.waitUpdate("available_commands_update")
	offered := map[string]bool{}
	for _, c := range u["availableCommands"].([]any) {
		offered[c.(map[string]any)["name"].(string)] = true
	}
	for name, want := range map[string]string{"agents": "general", "todos": "", "mcp": "", "hooks": "", "permissions": "Approval mode: auto"} {
		if !offered[name] {
			t.Fatalf("/%s is not offered: %v", name, u)
		}
		resp, notes := p.call("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "/" + name}}})
		if resp["result"] == nil || strings.TrimSpace(answerText(notes)) == "" || !strings.Contains(answerText(notes), want) {
			t.Fatalf("/%s: %v %q", name, resp, answerText(notes))
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d requests to the model", n)
	}
}
