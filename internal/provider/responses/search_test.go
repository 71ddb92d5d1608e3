package responses_test

import (
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/provider/responses"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// A recorded web search reply is shown with its citation, and the next
// request sends its web_search_call and message items back byte for byte,
// in place of the session's text.
func TestWebSearchReplayedExactly(t *testing.T) {
	srv := providertest.New(t, providertest.ResponsesWebSearch(), providertest.Reply{Text: "ok"})
	c, err := responses.New(responses.Config{Transport: provider.Config{Endpoint: srv.URL(), APIKey: "sk-test-SECRET-0123456789"}, WebSearch: true})
	if err != nil {
		t.Fatal(err)
	}
	req := request()
	var shown strings.Builder
	r, err := c.Stream(t.Context(), req, func(d provider.Delta) { shown.WriteString(d.Content) })
	if err != nil {
		t.Fatal(err)
	}
	if r.Content == nil || *r.Content != providertest.ResponsesWebSearchText || shown.String() != *r.Content || r.FinishReason != provider.FinishStop {
		t.Fatalf("reply %+v", r)
	}
	if len(r.Sources) != 1 || r.Sources[0] != (provider.Source{Title: "Go 1.25 Release Notes — go.dev", URL: "https://go.dev/doc/go1.25?utm_source=openai"}) {
		t.Errorf("sources %+v", r.Sources)
	}
	if !strings.Contains(string(srv.Requests()[0].Body), `{"type":"web_search"}`) {
		t.Errorf("web_search not offered: %s", srv.Requests()[0].Body)
	}
	thanks := "thanks"
	req.Messages = append(req.Messages,
		provider.Message{Role: provider.RoleAssistant, Content: r.Content, ReasoningDetails: r.ReasoningDetails},
		provider.Message{Role: provider.RoleUser, Content: &thanks})
	if _, err := c.Stream(t.Context(), req, nil); err != nil {
		t.Fatal(err)
	}
	want := `"input_text","text":"hi"}]},` + providertest.ResponsesWebSearchReplay() + `,{"type":"message","role":"user","content":[{"type":"input_text","text":"thanks"}]}]`
	if body := string(srv.Requests()[1].Body); !strings.Contains(body, want) {
		t.Errorf("second request\n%s\nwant it to contain\n%s", body, want)
	}
}
