package provider_test

import (
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// OpenRouter's web plugin: asked for, its annotations shown as sources and
// kept after the reasoning details, and sent back as the message's
// annotations byte for byte, the reasoning details as they were.
func TestWebPluginAnnotationsReplayed(t *testing.T) {
	srv := providertest.New(t, providertest.OpenRouterWebPlugin(), providertest.Reply{Text: "ok"})
	c := newClient(t, srv, provider.Config{WebPlugin: true})
	hi := "latest go?"
	req := provider.Request{Model: "openai/gpt-5.6-luna", Messages: []provider.Message{{Role: provider.RoleUser, Content: &hi}}}
	r, err := c.Stream(t.Context(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Content == nil || *r.Content != providertest.OpenRouterWebPluginText {
		t.Fatalf("reply %+v", r)
	}
	if len(r.Sources) != 2 || r.Sources[0] != (provider.Source{Title: "Go 1.25 Release Notes", URL: "https://go.dev/doc/go1.25"}) || r.Sources[1].URL != "https://go.dev/doc/devel/release" {
		t.Errorf("sources %+v", r.Sources)
	}
	if !strings.Contains(string(srv.Requests()[0].Body), `,"plugins":[{"id":"web"}],"stream":true`) {
		t.Errorf("the web plugin was not asked for: %s", srv.Requests()[0].Body)
	}
	// As if the reply had reasoning details too: they go back as they were.
	details := jsontext.Value(`[{"type":"reasoning.encrypted","data":"x\u002By","index":0},` + string(r.ReasoningDetails[1:]))
	thanks := "thanks"
	req.Messages = append(req.Messages,
		provider.Message{Role: provider.RoleAssistant, Content: r.Content, ReasoningDetails: details},
		provider.Message{Role: provider.RoleUser, Content: &thanks})
	if _, err := c.Stream(t.Context(), req, nil); err != nil {
		t.Fatal(err)
	}
	want := `"reasoning_details":[{"type":"reasoning.encrypted","data":"x\u002By","index":0}],` + providertest.OpenRouterWebPluginReplay() + `}`
	if body := string(srv.Requests()[1].Body); !strings.Contains(body, want) {
		t.Errorf("second request\n%s\nwant it to contain\n%s", body, want)
	}
}
