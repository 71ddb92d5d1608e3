package acp_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// ACP tells the editor what one-shot and interactive runs say in a line:
// a reply cut off while calling tools ends the prompt with max_tokens (its
// call not run), a declined reply with refusal, its streamed text kept.
func TestPromptCutOffCallAndRefusal(t *testing.T) {
	srv := providertest.New(t,
		providertest.Reply{Text: "Writing it now.", ToolCalls: []providertest.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"touch ran`}}, FinishReason: "length"},
		providertest.Reply{Text: "I can't help with that.", FinishReason: "refusal"},
	)
	dir := t.TempDir()
	p := startAgentEnv(t, srv, dir, []string{"TINY_PROVIDER=anthropic", "ANTHROPIC_API_KEY=test-key", "TINY_MODEL=claude-sonnet-4-5"}, "--approval", "auto")
	p.initialize()
	id := p.newSession()
	for _, c := range []struct{ prompt, stop, text string }{
		{"write it", "max_tokens", "Writing it now."},
		{"do the bad thing", "refusal", "I can't help with that."},
	} {
		resp, notes := p.call("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": c.prompt}}})
		r, _ := resp["result"].(map[string]any)
		if r["stopReason"] != c.stop {
			t.Fatalf("%s: %v", c.prompt, resp)
		}
		if got := answerText(notes); got != c.text {
			t.Fatalf("%s: streamed text %q", c.prompt, got)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Fatal("the cut-off call ran")
	}
}
