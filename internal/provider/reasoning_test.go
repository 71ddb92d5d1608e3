package provider_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

func TestAnthropicModelCacheMarkers(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Text: "a"}, providertest.Reply{Text: "b"})
	c := newClient(t, srv, provider.Config{})
	tools := []provider.ToolDefinition{{Name: "read", Parameters: jsontext.Value(`{"type":"object"}`)}}
	for _, model := range []string{"anthropic/claude-sonnet-4", "openai/gpt-5"} {
		req := simpleRequest()
		req.Model, req.Tools = model, tools
		if _, err := c.Stream(t.Context(), req, nil); err != nil {
			t.Fatal(err)
		}
	}
	reqs := srv.Requests()
	claude, gpt := reqs[0], reqs[1]
	if cc := claude.Chat.CacheControl; cc == nil || cc.Type != "ephemeral" {
		t.Errorf("claude request cache_control = %+v, want automatic caching", cc)
	}
	sys := claude.Chat.Messages[0]
	if string(sys.ContentParts) != `[{"type":"text","text":"You are terse.","cache_control":{"type":"ephemeral"}}]` {
		t.Errorf("claude system message content = %s, want one text part with a breakpoint", sys.RawContent)
	}
	if string(claude.Chat.Messages[1].RawContent) != `"hi"` {
		t.Errorf("user message content = %s, want a plain string (no moving marker)", claude.Chat.Messages[1].RawContent)
	}
	if gpt.Chat.CacheControl != nil || gpt.Chat.Messages[0].ContentParts != nil {
		t.Errorf("gpt request carries cache markers: %s", gpt.Body)
	}
	if claude.DecodeError != "" || gpt.DecodeError != "" {
		t.Fatalf("decode: %s %s", claude.DecodeError, gpt.DecodeError)
	}
}

func TestReasoningAndUsageParameters(t *testing.T) {
	for effort, want := range map[string]string{
		provider.ReasoningDefault: "",
		provider.ReasoningOff:     "none",
		provider.ReasoningLow:     "low",
		provider.ReasoningMedium:  "medium",
		provider.ReasoningHigh:    "high",
	} {
		srv := providertest.New(t, providertest.Reply{Text: "a"})
		c := newClient(t, srv, provider.Config{Reasoning: effort, UsageAccounting: effort == provider.ReasoningLow})
		if _, _, err := stream(t, c); err != nil {
			t.Fatal(err)
		}
		got := srv.Requests()[0].Chat
		if r := got.Reasoning; (r == nil) != (want == "") || r != nil && r.Effort != want {
			t.Errorf("effort %q: reasoning = %+v, want effort %q", effort, r, want)
		}
		if wantUsage := effort == provider.ReasoningLow; (got.Usage != nil && got.Usage.Include) != wantUsage {
			t.Errorf("effort %q: usage = %+v", effort, got.Usage)
		}
	}
	if _, err := provider.New(provider.Config{Reasoning: "max"}); err == nil {
		t.Error("New accepted reasoning effort max")
	}
	if !provider.IsOpenRouter("https://openrouter.ai/api/v1") || provider.IsOpenRouter("http://127.0.0.1:8080/v1") {
		t.Error("IsOpenRouter misjudges endpoints")
	}
}

// Fragments as OpenRouter streams them: a reasoning.text detail in three
// pieces (the signature last) and an encrypted one in one piece whose
// spacing and escapes must survive.
var streamedDetails = []jsontext.Value{
	jsontext.Value(`{"type":"reasoning.text","text":"Let me ","format":"anthropic-claude-v1","index":0}`),
	jsontext.Value(`{"type":"reasoning.text","text":"look.","format":"anthropic-claude-v1","index":0}`),
	jsontext.Value(`{"type":"reasoning.text","text":"","signature":"c2ln\/bmF0dXJl","format":"anthropic-claude-v1","index":0}`),
	jsontext.Value(`{ "type" : "reasoning.encrypted", "data":"\u00e9nc==", "index":1 }`),
}

const mergedDetails = `[{"type":"reasoning.text","text":"Let me look.","format":"anthropic-claude-v1","index":0,"signature":"c2ln\/bmF0dXJl"},{ "type" : "reasoning.encrypted", "data":"\u00e9nc==", "index":1 }]`

func TestStreamedReasoningDetails(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{
		Reasoning:        "Let me look.",
		ReasoningDetails: streamedDetails,
		ToolCalls:        []providertest.ToolCall{{ID: "c1", Name: "read", Arguments: `{"path":"a"}`}},
	})
	c := newClient(t, srv, provider.Config{})
	var reasoning, content strings.Builder
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	r, err := c.Stream(ctx, simpleRequest(), func(d provider.Delta) {
		reasoning.WriteString(d.Reasoning)
		content.WriteString(d.Content)
	})
	if err != nil {
		t.Fatal(err)
	}
	if reasoning.String() != "Let me look." || content.Len() != 0 || r.Content != nil {
		t.Errorf("reasoning deltas %q, content deltas %q, content %v", reasoning.String(), content.String(), r.Content)
	}
	// The signature's escaped slash is a JSON string continued with an
	// empty text: the merged text is re-encoded, the signature kept.
	if string(r.ReasoningDetails) != mergedDetails {
		t.Errorf("details\n got %s\nwant %s", r.ReasoningDetails, mergedDetails)
	}
	if !r.ReasoningDetails.IsValid() {
		t.Error("merged details are not valid JSON")
	}
}

func TestReasoningDetailsOfJSONReplyKeptWhole(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{JSON: true, Text: "ok", ReasoningDetails: streamedDetails[3:]})
	r, _, err := stream(t, newClient(t, srv, provider.Config{}))
	if err != nil {
		t.Fatal(err)
	}
	want := "[" + string(streamedDetails[3]) + "]"
	if string(r.ReasoningDetails) != want {
		t.Errorf("details = %s, want %s", r.ReasoningDetails, want)
	}
}

func TestReasoningDetailsSentBackVerbatim(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Text: "ok"})
	c := newClient(t, srv, provider.Config{})
	req := simpleRequest()
	details := jsontext.Value(mergedDetails)
	req.Messages = append(req.Messages,
		provider.Message{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "c1", Name: "read", Arguments: "{}"}}, ReasoningDetails: details},
		provider.Message{Role: provider.RoleTool, ToolCallID: "c1", Content: new("x")},
	)
	if _, err := c.Stream(t.Context(), req, nil); err != nil {
		t.Fatal(err)
	}
	body := srv.Requests()[0].Body
	if !bytes.Contains(body, []byte(`"reasoning_details":`+mergedDetails+`}`)) {
		t.Errorf("body does not carry the details verbatim: %s", body)
	}
	if got := srv.Requests()[0].Chat.Messages[2].ReasoningDetails; string(got) != mergedDetails {
		t.Errorf("assistant message details = %s", got)
	}
}

func TestCostReported(t *testing.T) {
	cost := 0.00123
	srv := providertest.New(t, providertest.Reply{Text: "a", Usage: &providertest.Usage{PromptTokens: 10, CompletionTokens: 2, Cost: &cost}},
		providertest.Reply{Text: "b", Usage: &providertest.Usage{PromptTokens: 10, CompletionTokens: 2}})
	c := newClient(t, srv, provider.Config{})
	r, _, err := stream(t, c)
	if err != nil {
		t.Fatal(err)
	}
	if r.Usage.Cost == nil || *r.Usage.Cost != cost {
		t.Errorf("Cost = %v, want %v", r.Usage.Cost, cost)
	}
	r, _, err = stream(t, c)
	if err != nil {
		t.Fatal(err)
	}
	if r.Usage.Cost != nil {
		t.Errorf("Cost = %v without usage accounting", *r.Usage.Cost)
	}
}
