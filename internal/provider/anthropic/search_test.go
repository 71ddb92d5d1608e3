package anthropic_test

import (
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/provider/anthropic"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// A recorded native search reply is shown with its citations, and the
// next request sends its blocks back byte for byte.
func TestWebSearchReplayedExactly(t *testing.T) {
	srv := providertest.New(t, providertest.AnthropicWebSearch(), providertest.Reply{Text: "You're welcome."})
	c, err := anthropic.New(anthropic.Config{Transport: provider.Config{Endpoint: srv.URL(), APIKey: key}, WebSearch: true})
	if err != nil {
		t.Fatal(err)
	}
	var shown strings.Builder
	req := provider.Request{Model: "claude-sonnet-4-5", Messages: base(), Tools: readTool}
	r, err := c.Stream(t.Context(), req, func(d provider.Delta) { shown.WriteString(d.Content) })
	if err != nil {
		t.Fatal(err)
	}
	if r.Content == nil || *r.Content != providertest.AnthropicWebSearchText || shown.String() != *r.Content || len(r.ToolCalls) != 0 || r.FinishReason != provider.FinishStop {
		t.Fatalf("reply %+v, shown %q", r, shown.String())
	}
	want := []provider.Source{
		{Title: "Go 1.25 Release Notes - The Go Programming Language", URL: "https://go.dev/doc/go1.25"},
		{Title: "Release History - The Go Programming Language", URL: "https://go.dev/doc/devel/release"},
	}
	if len(r.Sources) != 2 || r.Sources[0] != want[0] || r.Sources[1] != want[1] {
		t.Errorf("sources %+v", r.Sources)
	}
	// 10682 in at $3 and 510 out at $15 per million, and one search at $0.01.
	if c := r.Usage.Cost; c == nil || *c < 0.049696-1e-9 || *c > 0.049696+1e-9 {
		t.Errorf("cost %v, want 0.049696 with the search", c)
	}
	replay := providertest.AnthropicWebSearchReplay()
	if string(r.ReasoningDetails) != replay {
		t.Errorf("details\n%s\nwant\n%s", r.ReasoningDetails, replay)
	}
	first := string(srv.Requests()[0].Body)
	if !strings.Contains(first, `{"type":"web_search_20250305","name":"web_search","max_uses":5,"cache_control":{"type":"ephemeral"}}],`) {
		t.Errorf("the server tool is not offered:\n%s", first)
	}

	req.Messages = append(req.Messages,
		provider.Message{Role: provider.RoleAssistant, Content: r.Content, ReasoningDetails: r.ReasoningDetails},
		provider.Message{Role: provider.RoleUser, Content: new("thanks")})
	if _, err := c.Stream(t.Context(), req, nil); err != nil {
		t.Fatal(err)
	}
	second := string(srv.Requests()[1].Body)
	turn := `{"role":"assistant","content":` + replay + `},{"role":"user","content":[{"type":"text","text":"thanks"`
	if !strings.Contains(second, turn) {
		t.Errorf("the assistant turn is not sent back byte for byte:\n%s\nwant it to contain\n%s", second, turn)
	}
}

// Without the server tool, a reply's text and calls are not kept twice.
func TestNoWebSearchKeepsDetailsToThinking(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Text: "hi", ToolCalls: []providertest.ToolCall{{ID: "toolu_1", Name: "read", Arguments: `{}`}}})
	r, err := newClient(t, srv, "").Stream(t.Context(), provider.Request{Model: "claude-sonnet-4-5", Messages: base(), Tools: readTool}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.ReasoningDetails != nil || r.Sources != nil || strings.Contains(string(srv.Requests()[0].Body), "web_search") {
		t.Fatalf("details %s, sources %v", r.ReasoningDetails, r.Sources)
	}
}
