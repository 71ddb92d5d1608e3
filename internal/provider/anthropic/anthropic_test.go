package anthropic_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/provider/anthropic"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

const key = "sk-ant-test-SECRET"

func newClient(t *testing.T, srv *providertest.Server, effort string) *provider.Client {
	t.Helper()
	c, err := anthropic.New(anthropic.Config{Transport: provider.Config{Endpoint: srv.URL(), APIKey: key, Reasoning: effort}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var readTool = []provider.ToolDefinition{
	{Name: "read", Description: "Read a file.", Parameters: jsontext.Value(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
	{Name: "bash", Description: "Run a command."},
}

func base() []provider.Message {
	return []provider.Message{
		{Role: provider.RoleSystem, Content: new("You are terse.")},
		{Role: provider.RoleUser, Content: new("read a.txt")},
	}
}

// wireBody is the Messages API request as sent.
type wireBody struct {
	Model     string `json:"model"`
	MaxTokens int    `json:"max_tokens"`
	Thinking  *struct {
		Type         string `json:"type"`
		BudgetTokens int    `json:"budget_tokens"`
	} `json:"thinking"`
	System []struct {
		Text         string         `json:"text"`
		CacheControl jsontext.Value `json:"cache_control"`
	} `json:"system"`
	Tools []struct {
		Name         string         `json:"name"`
		InputSchema  jsontext.Value `json:"input_schema"`
		CacheControl jsontext.Value `json:"cache_control"`
	} `json:"tools"`
	Messages []struct {
		Role    string           `json:"role"`
		Content []jsontext.Value `json:"content"`
	} `json:"messages"`
	Stream bool `json:"stream"`
}

func decodeBody(t *testing.T, b []byte) wireBody {
	t.Helper()
	var w wireBody
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatalf("request body: %v\n%s", err, b)
	}
	return w
}

func TestToolLoopWithThinking(t *testing.T) {
	u := &providertest.Usage{PromptTokens: 1200, CompletionTokens: 40, CachedTokens: new(int64(1000)), CacheWriteTokens: new(int64(150))}
	srv := providertest.New(t,
		providertest.Reply{Reasoning: "I should read it.", Signature: "c2lnbmF0dXJl/+=", ToolCalls: []providertest.ToolCall{{ID: "toolu_1", Name: "read", Arguments: `{"path": "a.txt"}`}}, Usage: u},
		providertest.Reply{Text: "It says hi.", Usage: u},
	)
	c := newClient(t, srv, provider.ReasoningMedium)
	var thinking, text strings.Builder
	onDelta := func(d provider.Delta) { thinking.WriteString(d.Reasoning); text.WriteString(d.Content) }
	req := provider.Request{Model: "claude-sonnet-4-5", Messages: base(), Tools: readTool}
	r, err := c.Stream(t.Context(), req, onDelta)
	if err != nil {
		t.Fatal(err)
	}
	if thinking.String() != "I should read it." || text.Len() != 0 {
		t.Errorf("deltas: thinking %q, text %q", thinking.String(), text.String())
	}
	if r.FinishReason != provider.FinishToolUse || len(r.ToolCalls) != 1 || r.ToolCalls[0] != (provider.ToolCall{ID: "toolu_1", Name: "read", Arguments: `{"path": "a.txt"}`}) {
		t.Fatalf("reply = %+v", r)
	}
	wantDetails := `[{"type":"thinking","thinking":"I should read it.","signature":"c2lnbmF0dXJl/+="}]`
	if string(r.ReasoningDetails) != wantDetails {
		t.Errorf("details = %s, want %s", r.ReasoningDetails, wantDetails)
	}
	wantUsage := provider.Usage{Input: 50, Output: 40, CacheRead: 1000, CacheWrite: 150, PromptTokens: 1200}
	gotUsage := r.Usage
	gotUsage.Cost = nil
	if gotUsage != wantUsage {
		t.Errorf("usage = %+v, want %+v", gotUsage, wantUsage)
	}
	// 50*3 + 40*15 + 150*3.75 + 1000*0.30 per million.
	if r.Usage.Cost == nil || *r.Usage.Cost < 0.0016125-1e-12 || *r.Usage.Cost > 0.0016125+1e-12 {
		t.Errorf("cost = %v, want list price 0.0016125", r.Usage.Cost)
	}

	// The follow-up carries the thinking block verbatim before the call.
	req.Messages = append(req.Messages,
		provider.Message{Role: provider.RoleAssistant, ToolCalls: r.ToolCalls, ReasoningDetails: r.ReasoningDetails},
		provider.Message{Role: provider.RoleTool, ToolCallID: "toolu_1", Content: new("hi")},
	)
	r2, err := c.Stream(t.Context(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r2.Content == nil || *r2.Content != "It says hi." || r2.FinishReason != provider.FinishStop {
		t.Fatalf("second reply = %+v", r2)
	}
	reqs := srv.Requests()
	if reqs[1].Path != "/v1/messages" || reqs[1].Header.Get("x-api-key") != key || reqs[1].Header.Get("anthropic-version") != anthropic.APIVersion || reqs[1].Header.Get("Authorization") != "" {
		t.Errorf("path %s, headers %v", reqs[1].Path, reqs[1].Header)
	}
	body := string(reqs[1].Body)
	if !strings.Contains(body, `{"role":"assistant","content":[`+wantDetails[1:len(wantDetails)-1]+`,{"type":"tool_use","id":"toolu_1","name":"read","input":{"path": "a.txt"}}]}`) {
		t.Errorf("assistant turn not sent back verbatim:\n%s", body)
	}
	w := decodeBody(t, reqs[1].Body)
	if w.Model != "claude-sonnet-4-5" || !w.Stream || w.Thinking == nil || w.Thinking.BudgetTokens != 12000 || w.MaxTokens <= 12000 {
		t.Errorf("parameters: %+v", w)
	}
	if len(w.System) != 1 || w.System[0].Text != "You are terse." || string(w.System[0].CacheControl) != `{"type":"ephemeral"}` {
		t.Errorf("system = %+v", w.System)
	}
	if len(w.Tools) != 2 || w.Tools[0].CacheControl != nil || string(w.Tools[1].CacheControl) != `{"type":"ephemeral"}` || string(w.Tools[1].InputSchema) != `{"type":"object","properties":{}}` {
		t.Errorf("tools = %+v", w.Tools)
	}
	if len(w.Messages) != 3 || w.Messages[2].Role != "user" {
		t.Fatalf("messages = %+v", w.Messages)
	}
	if got := string(w.Messages[2].Content[0]); got != `{"type":"tool_result","tool_use_id":"toolu_1","content":"hi","cache_control":{"type":"ephemeral"}}` {
		t.Errorf("tool result block = %s", got)
	}
}

func TestConversionMergesTurns(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Text: "ok"})
	c := newClient(t, srv, "")
	msgs := append(base(),
		provider.Message{Role: provider.RoleAssistant, Content: new("Two calls."), ToolCalls: []provider.ToolCall{
			{ID: "a", Name: "read", Arguments: `{"path":"x"}`},
			{ID: "b", Name: "read", Arguments: `{"path":`}, // invalid: only another provider leaves it
		}},
		provider.Message{Role: provider.RoleTool, ToolCallID: "a", Content: new("x")},
		provider.Message{Role: provider.RoleTool, ToolCallID: "b", Content: new("Error: Tool arguments were invalid; the tool was not executed.")},
		provider.Message{Role: provider.RoleUser, Content: new("go on")},
	)
	if _, err := c.Stream(t.Context(), provider.Request{Model: "anthropic/claude-haiku-4-5", Messages: msgs}, nil); err != nil {
		t.Fatal(err)
	}
	w := decodeBody(t, srv.Requests()[0].Body)
	if w.Model != "claude-haiku-4-5" || w.Thinking != nil || w.MaxTokens != anthropic.DefaultMaxTokens || w.Tools != nil {
		t.Errorf("parameters: %+v", w)
	}
	var roles []string
	for _, m := range w.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "user,assistant,user" {
		t.Fatalf("roles = %v, want alternating turns", roles)
	}
	asst := w.Messages[1].Content
	if len(asst) != 3 || string(asst[0]) != `{"type":"text","text":"Two calls."}` || !strings.HasSuffix(string(asst[2]), `"input":{}}`) {
		t.Errorf("assistant blocks = %s", asst)
	}
	last := w.Messages[2].Content
	if len(last) != 3 || !strings.Contains(string(last[1]), `"tool_use_id":"b"`) || string(last[2]) != `{"type":"text","text":"go on","cache_control":{"type":"ephemeral"}}` {
		t.Errorf("last turn = %s", last)
	}
}

func TestAbortMidStream(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Text: strings.Repeat("word ", 50), Hang: true, After: 4})
	c := newClient(t, srv, "")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	got := make(chan struct{}, 100)
	done := make(chan error, 1)
	go func() {
		_, err := c.Stream(ctx, provider.Request{Model: "claude-sonnet-4", Messages: base()}, func(provider.Delta) { got <- struct{}{} })
		done <- err
	}()
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("no delta arrived")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Stream did not return after cancel")
	}
	select {
	case <-srv.Disconnected(0):
	case <-time.After(10 * time.Second):
		t.Fatal("the server never saw the client go away")
	}
}

func TestErrorClassification(t *testing.T) {
	cases := []struct {
		name      string
		reply     providertest.Reply
		kind      string
		retryable bool
		status    int
	}{
		{"overloaded before content", providertest.Reply{StreamError: "Overloaded"}, provider.KindProviderError, true, 529},
		{"overloaded after content", providertest.Reply{Text: "partial", StreamError: "Overloaded"}, provider.KindProviderError, false, 529},
		{"rate limit event", providertest.Reply{StreamError: "slow down", StreamErrorType: "rate_limit_error"}, provider.KindRateLimited, true, 429},
		{"prompt too long event", providertest.Reply{StreamError: "prompt is too long: 210000 tokens > 200000 maximum", StreamErrorType: "invalid_request_error"}, provider.KindContextOverflow, false, 0},
		{"other event", providertest.Reply{StreamError: "bad", StreamErrorType: "invalid_request_error"}, provider.KindProviderError, false, 0},
		{"cut", providertest.Reply{Text: "partial answer", Cut: true, After: 3}, provider.KindConnectionFailed, false, 0},
		{"no stop", providertest.Reply{Text: "x", OmitFinish: true}, provider.KindMalformedResponse, false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := providertest.New(t, tc.reply)
			_, err := newClient(t, srv, "").Stream(t.Context(), provider.Request{Model: "claude-sonnet-4", Messages: base()}, nil)
			var pe *provider.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error = %v", err)
			}
			if pe.Kind != tc.kind || pe.Retryable != tc.retryable || pe.Status != tc.status {
				t.Errorf("error = %+v, want kind %s retryable %v status %d", pe, tc.kind, tc.retryable, tc.status)
			}
			if strings.Contains(pe.Message, key) || strings.ContainsAny(pe.Message, "\r\n") {
				t.Errorf("unsafe message %q", pe.Message)
			}
		})
	}
}

func TestHTTPErrorMessage(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Status: 529})
	_, err := newClient(t, srv, "").Stream(t.Context(), provider.Request{Model: "claude-sonnet-4", Messages: base()}, nil)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Status != 529 || !strings.Contains(pe.Message, "scripted HTTP 529") {
		t.Fatalf("error = %+v", err)
	}
}

func TestEndpointAndPrices(t *testing.T) {
	if !anthropic.IsEndpoint("https://api.anthropic.com/v1") || anthropic.IsEndpoint("https://openrouter.ai/api/v1") {
		t.Error("IsEndpoint misjudges")
	}
	if _, err := anthropic.New(anthropic.Config{Transport: provider.Config{Endpoint: "ftp://x"}}); err == nil {
		t.Error("accepted an ftp endpoint")
	}
	u := provider.Usage{Input: 1e6, Output: 1e6}
	if p := anthropic.Price("claude-opus-4-5-20251101", u); p == nil || *p != 30 {
		t.Errorf("opus 4.5 price = %v", p)
	}
	if p := anthropic.Price("claude-opus-4-20250514", u); p == nil || *p != 90 {
		t.Errorf("opus 4 price = %v", p)
	}
	if p := anthropic.Price("some-other-model", u); p != nil {
		t.Errorf("unknown model priced %v", *p)
	}
}

// An overloaded_error before any content is sent again by provider.Retry
// inside the one logical request (runtime.md §1); after content it is not.
func TestRetryOfOverloaded(t *testing.T) {
	srv := providertest.New(t,
		providertest.Reply{StreamError: "Overloaded"},
		providertest.Reply{Status: 529},
		providertest.Reply{Text: "fine"},
	)
	var waits []string
	p := provider.Retry(newClient(t, srv, ""), provider.RetryConfig{
		Sleep:  func(context.Context, time.Duration) error { return nil },
		Jitter: func() float64 { return 0 },
	})
	r, err := p.Stream(t.Context(), provider.Request{Model: "claude-sonnet-4", Messages: base()}, func(d provider.Delta) {
		if d.Retry != nil {
			waits = append(waits, d.Retry.String())
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Content == nil || *r.Content != "fine" || len(srv.Requests()) != 3 {
		t.Fatalf("reply %+v after %d requests", r, len(srv.Requests()))
	}
	if len(waits) != 2 || !strings.Contains(waits[0], "HTTP 529") {
		t.Errorf("waits = %q", waits)
	}

	srv = providertest.New(t, providertest.Reply{Text: "partial", StreamError: "Overloaded"}, providertest.Reply{Text: "never"})
	p = provider.Retry(newClient(t, srv, ""), provider.RetryConfig{Sleep: func(context.Context, time.Duration) error { return nil }})
	if _, err := p.Stream(t.Context(), provider.Request{Model: "claude-sonnet-4", Messages: base()}, nil); err == nil || len(srv.Requests()) != 1 {
		t.Fatalf("error %v after %d requests: a begun reply must not be sent again", err, len(srv.Requests()))
	}
}
