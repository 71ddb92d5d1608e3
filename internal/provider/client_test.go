package provider_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

const testKey = "sk-test-SECRET-0123456789abcdef"

func newClient(t *testing.T, srv *providertest.Server, cfg provider.Config) *provider.Client {
	t.Helper()
	if cfg.Endpoint == "" {
		cfg.Endpoint = srv.URL()
	}
	if cfg.APIKey == "" {
		cfg.APIKey = testKey
	}
	c, err := provider.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func simpleRequest() provider.Request {
	return provider.Request{
		Model: "test/model",
		Messages: []provider.Message{
			{Role: provider.RoleSystem, Content: new("You are terse.")},
			{Role: provider.RoleUser, Content: new("hi")},
		},
	}
}

// stream runs one request and collects the deltas.
func stream(t *testing.T, c *provider.Client) (provider.Response, []string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var deltas []string
	r, err := c.Stream(ctx, simpleRequest(), func(d provider.Delta) { deltas = append(deltas, d.Content) })
	return r, deltas, err
}

// providerError asserts err is an *provider.Error of kind and returns it.
func providerError(t *testing.T, err error, kind string) *provider.Error {
	t.Helper()
	var pe *provider.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error = %v (%T), want *provider.Error", err, err)
	}
	if pe.Kind != kind {
		t.Fatalf("Kind = %q (message %q), want %q", pe.Kind, pe.Message, kind)
	}
	if strings.Contains(pe.Message, testKey) || strings.ContainsAny(pe.Message, "\n\r") {
		t.Fatalf("message leaks the key or is not one line: %q", pe.Message)
	}
	return pe
}

func TestTextStream(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Text: "Hello, wörld!"})
	r, deltas, err := stream(t, newClient(t, srv, provider.Config{}))
	if err != nil {
		t.Fatal(err)
	}
	if r.Content == nil || *r.Content != "Hello, wörld!" {
		t.Fatalf("Content = %v", r.Content)
	}
	want := []string{"Hell", "o, w", "örld", "!"}
	if strings.Join(deltas, "|") != strings.Join(want, "|") {
		t.Errorf("deltas = %q, want %q", deltas, want)
	}
	if r.FinishReason != provider.FinishStop || len(r.ToolCalls) != 0 {
		t.Errorf("FinishReason = %q, ToolCalls = %v", r.FinishReason, r.ToolCalls)
	}
	if r.Usage != (provider.Usage{}) {
		t.Errorf("Usage = %+v without a usage chunk", r.Usage)
	}
}

func TestParallelToolCalls(t *testing.T) {
	calls := []providertest.ToolCall{
		{ID: "call_1", Name: "read", Arguments: `{"path":"a.txt"}`},
		{ID: "call_2", Name: "bash", Arguments: `{"command":"ls -la | wc -l"}`},
		{ID: "call_3", Name: "read", Arguments: `{"path":`}, // invalid JSON is passed on
	}
	srv := providertest.New(t, providertest.Reply{ToolCalls: calls, ChunkSize: 3})
	r, deltas, err := stream(t, newClient(t, srv, provider.Config{}))
	if err != nil {
		t.Fatal(err)
	}
	if r.FinishReason != provider.FinishToolUse || r.Content != nil || len(deltas) != 0 {
		t.Fatalf("FinishReason = %q, Content = %v, deltas = %q", r.FinishReason, r.Content, deltas)
	}
	if len(r.ToolCalls) != len(calls) {
		t.Fatalf("ToolCalls = %+v", r.ToolCalls)
	}
	for i, c := range calls {
		got := r.ToolCalls[i]
		if got.ID != c.ID || got.Name != c.Name || got.Arguments != c.Arguments {
			t.Errorf("call %d = %+v, want %+v", i, got, c)
		}
	}
}

// TestInterleavedToolCalls sends fragments of two calls interleaved by
// index, then text and calls from a server that omits the index.
func TestInterleavedToolCalls(t *testing.T) {
	interleaved := sse(
		`{"choices":[{"index":0,"delta":{"role":"assistant","content":"Let me look.","tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"read","arguments":""}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","type":"function","function":{"name":"bash","arguments":"{\"comm"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"and\":\"ls\"}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"x\"}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`[DONE]`,
	)
	noIndex := sse(
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"a","type":"function","function":{"name":"read","arguments":"{\"path\""}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":":\"x\"}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"b","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`[DONE]`,
	)
	want := []provider.ToolCall{
		{ID: "a", Name: "read", Arguments: `{"path":"x"}`},
		{ID: "b", Name: "bash", Arguments: `{"command":"ls"}`},
	}
	srv := providertest.New(t, providertest.Reply{Body: interleaved}, providertest.Reply{Body: noIndex})
	c := newClient(t, srv, provider.Config{})
	for i := range 2 {
		r, _, err := stream(t, c)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.ToolCalls) != 2 || r.ToolCalls[0] != want[0] || r.ToolCalls[1] != want[1] {
			t.Errorf("reply %d: ToolCalls = %+v, want %+v", i, r.ToolCalls, want)
		}
	}
}

func TestUsageNormalization(t *testing.T) {
	tests := []struct {
		name  string
		usage providertest.Usage
		want  provider.Usage
	}{
		{"plain", providertest.Usage{PromptTokens: 100, CompletionTokens: 7},
			provider.Usage{Input: 100, Output: 7, PromptTokens: 100}},
		{"cached", providertest.Usage{PromptTokens: 100, CompletionTokens: 7, CachedTokens: new(int64(80))},
			provider.Usage{Input: 20, Output: 7, CacheRead: 80, PromptTokens: 100}},
		{"cache hit fallback", providertest.Usage{PromptTokens: 100, CompletionTokens: 7, PromptCacheHitTokens: new(int64(64))},
			provider.Usage{Input: 36, Output: 7, CacheRead: 64, PromptTokens: 100}},
		{"cached wins over fallback", providertest.Usage{PromptTokens: 100, CompletionTokens: 7, CachedTokens: new(int64(0)), PromptCacheHitTokens: new(int64(64))},
			provider.Usage{Input: 100, Output: 7, CacheRead: 0, PromptTokens: 100}},
		{"cache write", providertest.Usage{PromptTokens: 100, CompletionTokens: 7, CachedTokens: new(int64(30)), CacheWriteTokens: new(int64(50))},
			provider.Usage{Input: 20, Output: 7, CacheRead: 30, CacheWrite: 50, PromptTokens: 100}},
		{"input never negative", providertest.Usage{PromptTokens: 10, CompletionTokens: 1, CachedTokens: new(int64(8)), CacheWriteTokens: new(int64(8))},
			provider.Usage{Input: 0, Output: 1, CacheRead: 8, CacheWrite: 8, PromptTokens: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, jsonMode := range []bool{false, true} {
				srv := providertest.New(t, providertest.Reply{Text: "ok", Usage: &tt.usage, JSON: jsonMode})
				r, _, err := stream(t, newClient(t, srv, provider.Config{}))
				if err != nil {
					t.Fatal(err)
				}
				if r.Usage != tt.want {
					t.Errorf("json=%v: Usage = %+v, want %+v", jsonMode, r.Usage, tt.want)
				}
			}
		})
	}
}

func TestFinishReasons(t *testing.T) {
	for _, tt := range []struct{ wire, want string }{
		{"stop", provider.FinishStop},
		{"tool_calls", provider.FinishToolUse},
		{"function_call", provider.FinishToolUse},
		{"length", provider.FinishLength},
		{"content_filter", provider.FinishRefusal},
	} {
		srv := providertest.New(t, providertest.Reply{Text: "x", FinishReason: tt.wire})
		r, _, err := stream(t, newClient(t, srv, provider.Config{}))
		if err != nil {
			t.Fatalf("%s: %v", tt.wire, err)
		}
		if r.FinishReason != tt.want {
			t.Errorf("%s: FinishReason = %q, want %q", tt.wire, r.FinishReason, tt.want)
		}
	}

	srv := providertest.New(t,
		providertest.Reply{Text: "x", FinishReason: "end_of_world"},
		providertest.Reply{Text: "x", OmitFinish: true},
		providertest.Reply{Text: "x", OmitFinish: true, JSON: true},
	)
	c := newClient(t, srv, provider.Config{})
	_, _, err := stream(t, c)
	pe := providerError(t, err, provider.KindUnsupportedFinishReason)
	if pe.Message != `provider finished with unsupported reason "end_of_world"` {
		t.Errorf("message = %q", pe.Message)
	}
	for range 2 {
		_, _, err = stream(t, c)
		pe = providerError(t, err, provider.KindMalformedResponse)
		if pe.Message != "provider reply has no finish reason" {
			t.Errorf("message = %q", pe.Message)
		}
	}
}

func TestHTTPErrors(t *testing.T) {
	long := strings.Repeat("quota detail ", 100)
	rateBody := `{"error":{"message":"Rate limit exceeded for key ` + testKey + `.\n` + long + `","code":429,"metadata":{"raw":"UPSTREAM-RAW-BODY"}}}`
	srv := providertest.New(t,
		providertest.Reply{Status: 429, Body: rateBody},
		providertest.Reply{Status: 500, Body: "<html><body>Internal " + testKey + "</body></html>", ContentType: "text/html"},
		providertest.Reply{Status: 401, Body: `{"error":"invalid api key"}`},
		providertest.Reply{Status: 503},
	)
	c := newClient(t, srv, provider.Config{})

	_, _, err := stream(t, c)
	pe := providerError(t, err, provider.KindRateLimited)
	if pe.Status != 429 || !strings.HasPrefix(pe.Message, "provider returned HTTP 429 (rate limited): Rate limit exceeded for key [redacted]. quota detail") {
		t.Errorf("429: %+v", pe)
	}
	if n := len([]rune(pe.Message)); n > 260 || strings.Contains(pe.Message, "UPSTREAM") {
		t.Errorf("429 message is %d runes or dumps the body: %q", n, pe.Message)
	}

	_, _, err = stream(t, c)
	pe = providerError(t, err, provider.KindHTTPStatus)
	if pe.Status != 500 || pe.Message != "provider returned HTTP 500" {
		t.Errorf("500 with an HTML body: %+v", pe)
	}

	_, _, err = stream(t, c)
	pe = providerError(t, err, provider.KindHTTPStatus)
	if pe.Message != "provider returned HTTP 401: invalid api key" {
		t.Errorf("401: %+v", pe)
	}

	_, _, err = stream(t, c)
	pe = providerError(t, err, provider.KindHTTPStatus)
	if pe.Message != "provider returned HTTP 503: scripted HTTP 503" {
		t.Errorf("503: %+v", pe)
	}

	_, _, err = stream(t, c) // script exhausted
	pe = providerError(t, err, provider.KindHTTPStatus)
	if pe.Message != "provider returned HTTP 500: script exhausted" {
		t.Errorf("exhausted: %+v", pe)
	}
}

func TestNoRetry(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Status: 502}, providertest.Reply{Text: "second"})
	_, _, err := stream(t, newClient(t, srv, provider.Config{}))
	providerError(t, err, provider.KindHTTPStatus)
	if n := len(srv.Requests()); n != 1 || srv.Pending() != 1 {
		t.Errorf("requests = %d, pending = %d; want one request and the second reply unused", n, srv.Pending())
	}
}

func TestStreamErrorEvent(t *testing.T) {
	srv := providertest.New(t,
		providertest.Reply{Text: "partial", StreamError: "Upstream provider disconnected"},
		providertest.Reply{Status: 200, ContentType: "application/json", Body: `{"error":{"message":"bad model","code":400}}`},
	)
	c := newClient(t, srv, provider.Config{})
	_, _, err := stream(t, c)
	pe := providerError(t, err, provider.KindProviderError)
	if pe.Message != "provider reported an error: Upstream provider disconnected" {
		t.Errorf("message = %q", pe.Message)
	}
	_, _, err = stream(t, c)
	pe = providerError(t, err, provider.KindProviderError)
	if pe.Message != "provider reported an error: bad model" {
		t.Errorf("message = %q", pe.Message)
	}
}

func TestStreamCut(t *testing.T) {
	const want = "provider stream ended before the reply finished"
	srv := providertest.New(t,
		// Connection aborted after two events.
		providertest.Reply{Text: "a longer partial answer", Cut: true, After: 2},
		// Response ends cleanly but without a finish reason or [DONE].
		providertest.Reply{Body: sse(`{"choices":[{"index":0,"delta":{"content":"par"}}]}`)},
		// Cut inside an event.
		providertest.Reply{Body: `data: {"choices":[{"index":0,"delta":{"content":"par"}}]}` + "\n\n" + `data: {"choices":[{"ind`},
		// Connection aborted before any response.
		providertest.Reply{Cut: true},
	)
	c := newClient(t, srv, provider.Config{})
	for i := range 4 {
		_, _, err := stream(t, c)
		pe := providerError(t, err, provider.KindConnectionFailed)
		if !strings.HasPrefix(pe.Message, want) && !(i == 3 && strings.HasPrefix(pe.Message, "provider connection failed: ")) {
			t.Errorf("reply %d: message = %q", i, pe.Message)
		}
	}
}

func TestIdleTimeout(t *testing.T) {
	srv := providertest.New(t,
		providertest.Reply{Text: "abcdefgh", Hang: true, After: 1}, // mid-stream
		providertest.Reply{Hang: true},                             // before the headers
	)
	c := newClient(t, srv, provider.Config{IdleTimeout: 200 * time.Millisecond})
	for i := range 2 {
		start := time.Now()
		_, deltas, err := stream(t, c)
		elapsed := time.Since(start)
		pe := providerError(t, err, provider.KindTimeout)
		if pe.Message != "provider sent no data for 200ms (--idle-timeout 200ms; raise it with --idle-timeout or TINY_IDLE_TIMEOUT)" {
			t.Errorf("message = %q", pe.Message)
		}
		if elapsed < 200*time.Millisecond || elapsed > 3*time.Second {
			t.Errorf("returned after %v with a 200ms idle timeout", elapsed)
		}
		if i == 0 && len(deltas) != 1 {
			t.Errorf("deltas = %q, want the one sent before the hang", deltas)
		}
		waitDisconnect(t, srv, i)
	}
}

// TestIdleTimeoutIsIdle checks that a slow but steady stream is not cut.
func TestIdleTimeoutIsIdle(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Handler: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for range 6 {
			w.Write([]byte(": keep-alive\n\n"))
			rc.Flush()
			time.Sleep(60 * time.Millisecond)
		}
		w.Write([]byte(sse(`{"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`, "[DONE]")))
	}})
	r, _, err := stream(t, newClient(t, srv, provider.Config{IdleTimeout: 200 * time.Millisecond}))
	if err != nil {
		t.Fatalf("a stream with keep-alives every 60ms failed: %v", err)
	}
	if *r.Content != "ok" {
		t.Errorf("Content = %q", *r.Content)
	}
}

func TestCancelStopsAtOnce(t *testing.T) {
	srv := providertest.New(t,
		providertest.Reply{Text: "hello world", Hang: true, After: 1},
		providertest.Reply{Delay: time.Hour},
	)
	c := newClient(t, srv, provider.Config{})

	// Cancelled while the stream hangs mid-reply.
	ctx, cancel := context.WithCancel(t.Context())
	var cancelled time.Time
	_, err := c.Stream(ctx, simpleRequest(), func(provider.Delta) {
		cancelled = time.Now()
		cancel()
	})
	if since := time.Since(cancelled); since > time.Second {
		t.Errorf("Stream returned %v after cancel", since)
	}
	checkCancelled(t, err)
	waitDisconnect(t, srv, 0)

	// Cancelled while waiting for the response headers.
	ctx, cancel = context.WithCancel(t.Context())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err = c.Stream(ctx, simpleRequest(), nil)
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Errorf("Stream returned after %v", elapsed)
	}
	checkCancelled(t, err)
	waitDisconnect(t, srv, 1)
}

func checkCancelled(t *testing.T, err error) {
	t.Helper()
	var pe *provider.Error
	if !errors.Is(err, context.Canceled) || errors.As(err, &pe) {
		t.Fatalf("error = %v, want the context error", err)
	}
}

func waitDisconnect(t *testing.T, srv *providertest.Server, i int) {
	t.Helper()
	select {
	case <-srv.Disconnected(i):
	case <-time.After(5 * time.Second):
		t.Fatalf("server did not see request %d disconnect", i)
	}
}

func TestOversizeResponse(t *testing.T) {
	big := strings.Repeat("x", 5000)
	srv := providertest.New(t,
		providertest.Reply{Text: big, ChunkSize: 100},
		providertest.Reply{Text: big, JSON: true},
		providertest.Reply{Text: strings.Repeat("y", 900), ChunkSize: 900}, // fits
	)
	c := newClient(t, srv, provider.Config{MaxResponseBytes: 2048})
	for range 2 {
		_, _, err := stream(t, c)
		pe := providerError(t, err, provider.KindResponseTooLarge)
		if pe.Message != "provider response exceeded 2048 bytes" {
			t.Errorf("message = %q", pe.Message)
		}
	}
	if _, _, err := stream(t, c); err != nil {
		t.Errorf("a reply under the limit: %v", err)
	}
}

func TestNonStreamingJSON(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{
		JSON:      true,
		Text:      "Reading it.",
		ToolCalls: []providertest.ToolCall{{ID: "c1", Name: "read", Arguments: `{"path":"a"}`}},
		Usage:     &providertest.Usage{PromptTokens: 12, CompletionTokens: 3},
	})
	r, deltas, err := stream(t, newClient(t, srv, provider.Config{}))
	if err != nil {
		t.Fatal(err)
	}
	if *r.Content != "Reading it." || len(deltas) != 1 || deltas[0] != "Reading it." {
		t.Errorf("Content = %q, deltas = %q", *r.Content, deltas)
	}
	if r.FinishReason != provider.FinishToolUse || len(r.ToolCalls) != 1 ||
		r.ToolCalls[0] != (provider.ToolCall{ID: "c1", Name: "read", Arguments: `{"path":"a"}`}) {
		t.Errorf("FinishReason = %q, ToolCalls = %+v", r.FinishReason, r.ToolCalls)
	}
	if r.Usage != (provider.Usage{Input: 12, Output: 3, PromptTokens: 12}) {
		t.Errorf("Usage = %+v", r.Usage)
	}
}

func TestEndpoint(t *testing.T) {
	srv := providertest.New(t)
	for _, tt := range []struct{ endpoint, path, query string }{
		{srv.URL(), "/v1/chat/completions", ""},
		{srv.URL() + "/", "/v1/chat/completions", ""},
		{srv.URL() + "/chat/completions", "/v1/chat/completions", ""},
		{srv.URL() + "/chat/completions/", "/v1/chat/completions", ""},
		{srv.URL() + "?api-version=2", "/v1/chat/completions", "api-version=2"},
	} {
		srv.Enqueue(providertest.Reply{Text: "ok"})
		c := newClient(t, srv, provider.Config{Endpoint: tt.endpoint})
		if _, _, err := stream(t, c); err != nil {
			t.Errorf("%s: %v", tt.endpoint, err)
			continue
		}
		reqs := srv.Requests()
		last := reqs[len(reqs)-1]
		if last.Path != tt.path || last.RawQuery != tt.query || last.Method != http.MethodPost {
			t.Errorf("%s: %s %s?%s", tt.endpoint, last.Method, last.Path, last.RawQuery)
		}
	}

	c, err := provider.New(provider.Config{})
	if err != nil || c.URL() != "https://openrouter.ai/api/v1/chat/completions" {
		t.Errorf("default endpoint: %v, %v", c, err)
	}
	for _, bad := range []string{"ftp://example.com/v1", "localhost:8080", "http://", "://x", "/v1"} {
		if _, err := provider.New(provider.Config{Endpoint: bad}); err == nil {
			t.Errorf("New(%q) succeeded", bad)
		}
	}
	c, err = provider.New(provider.Config{Endpoint: "https://user:hunter2@example.com/v1"})
	if err != nil || strings.Contains(c.URL(), "hunter2") {
		t.Errorf("URL() = %q, %v; want the password redacted", c.URL(), err)
	}
}

func TestConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c, err := provider.New(provider.Config{Endpoint: "http://" + addr + "/v1", APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Stream(t.Context(), simpleRequest(), nil)
	pe := providerError(t, err, provider.KindConnectionFailed)
	if !strings.HasPrefix(pe.Message, "provider connection failed: ") || !strings.Contains(pe.Message, "refused") {
		t.Errorf("message = %q", pe.Message)
	}
}

func TestConnectTimeout(t *testing.T) {
	// A dialer that never connects stands in for an unreachable host.
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	c, err := provider.New(provider.Config{
		Endpoint:       "http://127.0.0.1:9/v1",
		HTTPClient:     &http.Client{Transport: tr},
		ConnectTimeout: 150 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = c.Stream(t.Context(), simpleRequest(), nil)
	pe := providerError(t, err, provider.KindTimeout)
	if pe.Message != "provider connection timed out after 150ms" {
		t.Errorf("message = %q", pe.Message)
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Errorf("took %v", elapsed)
	}
}

func TestRequestShape(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Text: "ok"}, providertest.Reply{Text: "ok"})
	c := newClient(t, srv, provider.Config{Header: http.Header{"X-Title": {"tiny-go"}}})
	req := provider.Request{
		Model: "test/model",
		Messages: []provider.Message{
			{Role: provider.RoleSystem, Content: new("sys")},
			{Role: provider.RoleUser, Content: new("read a")},
			{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: "c1", Name: "read", Arguments: `{"path":"a"}`}}},
			{Role: provider.RoleTool, ToolCallID: "c1", Content: new("contents")},
		},
		Tools: []provider.ToolDefinition{{
			Name:        "read",
			Description: "Read a file.",
			Parameters:  jsontext.Value(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
		}},
	}
	if _, err := c.Stream(t.Context(), req, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stream(t.Context(), simpleRequest(), nil); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	got := reqs[0]
	if h := got.Header.Get("Authorization"); h != "Bearer "+testKey {
		t.Errorf("Authorization = %q", h)
	}
	if got.Header.Get("X-Title") != "tiny-go" || got.Header.Get("Content-Type") != "application/json" {
		t.Errorf("headers = %v", got.Header)
	}
	if got.DecodeError != "" {
		t.Fatalf("body does not decode: %s", got.DecodeError)
	}
	chat := got.Chat
	if chat.Model != "test/model" || !chat.Stream || !chat.StreamOptions.IncludeUsage {
		t.Errorf("model/stream/stream_options = %q %v %+v", chat.Model, chat.Stream, chat.StreamOptions)
	}
	if len(chat.Messages) != 4 {
		t.Fatalf("messages = %+v", chat.Messages)
	}
	asst := chat.Messages[2]
	if asst.Role != "assistant" || asst.Content != nil || len(asst.ToolCalls) != 1 ||
		asst.ToolCalls[0].ID != "c1" || asst.ToolCalls[0].Type != "function" ||
		asst.ToolCalls[0].Function.Name != "read" || asst.ToolCalls[0].Function.Arguments != `{"path":"a"}` {
		t.Errorf("assistant message = %+v", asst)
	}
	if tool := chat.Messages[3]; tool.Role != "tool" || tool.ToolCallID != "c1" || *tool.Content != "contents" {
		t.Errorf("tool message = %+v", tool)
	}
	if len(chat.Tools) != 1 || chat.Tools[0].Type != "function" || chat.Tools[0].Function.Name != "read" ||
		chat.Tools[0].Function.Description != "Read a file." {
		t.Errorf("tools = %+v", chat.Tools)
	}

	// The raw body: content is present as null, no "strict" anywhere.
	var raw struct {
		Messages []map[string]jsontext.Value `json:"messages"`
	}
	if err := json.Unmarshal(got.Body, &raw); err != nil {
		t.Fatal(err)
	}
	if v, ok := raw.Messages[2]["content"]; !ok || string(v) != "null" {
		t.Errorf("assistant content = %s (present %v), want null", v, ok)
	}
	if strings.Contains(string(got.Body), "strict") {
		t.Errorf("body mentions strict: %s", got.Body)
	}
	if strings.Contains(string(reqs[1].Body), `"tools"`) {
		t.Errorf("tools sent without tools: %s", reqs[1].Body)
	}
}

// sse frames data payloads as server-sent events.
func sse(data ...string) string {
	var b strings.Builder
	for _, d := range data {
		b.WriteString("data: " + d + "\n\n")
	}
	return b.String()
}

// A stream that fails midway with its usage beside the error (the shape
// OpenRouter sends, as recorded from the live API by pydantic-ai's test
// fixtures): the failure carries what the provider billed.
func TestStreamErrorKeepsBilledUsage(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Body: sse(
		`{"choices":[{"index":0,"delta":{"content":"par"}}]}`,
		`{"error":{"message":"Upstream error","code":502},"usage":{"prompt_tokens":43,"completion_tokens":10,"total_tokens":53}}`,
	)})
	_, _, err := stream(t, newClient(t, srv, provider.Config{}))
	pe := providerError(t, err, provider.KindProviderError)
	if pe.Usage == nil || pe.Usage.Input != 43 || pe.Usage.Output != 10 {
		t.Errorf("usage = %+v; want the 43 prompt and 10 completion tokens billed", pe.Usage)
	}
}
