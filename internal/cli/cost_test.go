package cli

import (
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

func TestOneShotShowsCost(t *testing.T) {
	first, second := 0.001, 0.002
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "read", `{"path":"a.txt"}`)}, Usage: &providertest.Usage{PromptTokens: 1000, CompletionTokens: 10, CachedTokens: new(int64(800)), Cost: &first}},
		providertest.Reply{Text: "done", Usage: &providertest.Usage{PromptTokens: 1100, CompletionTokens: 5, CachedTokens: new(int64(1000)), Cost: &second}},
	)
	c := newCLI(t, srv)
	c.write("a.txt", "x\n")
	code, stdout, stderr := c.main("", "read a.txt")
	if code != 0 || stdout != "done\n" {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	for _, want := range []string{"  $0.0010 1k in · 10 out · 80% cached", "  $0.0020 1.1k in · 5 out · 90% cached", "cost $0.0030 for 2 request(s)"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	// Usage accounting is asked of OpenRouter only; cost comes back anyway
	// from a server that reports it.
	if got := srv.Requests()[0].Chat.Usage; got != nil {
		t.Errorf("usage accounting asked of a non-OpenRouter endpoint: %+v", got)
	}
}

func TestAnthropicListPriceCost(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Text: "hi", Usage: &providertest.Usage{PromptTokens: 1000000, CompletionTokens: 0}})
	c := anthropicCLI(t, srv)
	code, _, stderr := c.main("", "hello")
	if code != 0 || !strings.Contains(stderr, "cost $3.0000 for 1 request(s)") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}
