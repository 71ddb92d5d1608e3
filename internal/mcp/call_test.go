package mcp

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

var stateless = &sdk.StreamableHTTPOptions{Stateless: true}

// resultServer offers one tool per canned result.
func resultServer(t *testing.T, results map[string]*sdk.CallToolResult) *Client {
	t.Helper()
	var names []string
	srv := newSDKServer(t, nil, stateless, func(s *sdk.Server) {
		for name, res := range results {
			names = append(names, name)
			addTool(s, name, objectSchema, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return res, nil
			})
		}
	})
	return connect(t, catalogServer(t, "r", entry{URL: srv.URL, AllowedTools: names}))
}

func TestCallResults(t *testing.T) {
	big := strings.Repeat("é", MaxResultBytes) // 2 bytes each: cut mid-way
	results := map[string]*sdk.CallToolResult{
		"text": {Content: []sdk.Content{&sdk.TextContent{Text: "one"}, &sdk.TextContent{Text: "two"}}},
		"resource": {Content: []sdk.Content{
			&sdk.TextContent{Text: "before"},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///a.txt", MIMEType: "text/plain", Text: "contents of a"}},
		}},
		"structured": {
			Content:           []sdk.Content{&sdk.TextContent{Text: "summary"}},
			StructuredContent: map[string]any{"b": 2, "a": []any{"x", true}},
		},
		"unsupported": {Content: []sdk.Content{
			&sdk.ImageContent{Data: []byte("png"), MIMEType: "image/png"},
			&sdk.AudioContent{Data: []byte("wav"), MIMEType: "audio/wav"},
			&sdk.ResourceLink{URI: "file:///b", Name: "b"},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///c.bin", Blob: []byte{0, 1}}},
			&sdk.TextContent{Text: "tail"},
		}},
		"empty":      {Content: []sdk.Content{}},
		"emptytext":  {Content: []sdk.Content{&sdk.TextContent{Text: ""}}},
		"big":        {Content: []sdk.Content{&sdk.TextContent{Text: big}}},
		"fails":      {Content: []sdk.Content{&sdk.TextContent{Text: "disk full"}}, IsError: true},
		"failsempty": {IsError: true},
	}
	c := resultServer(t, results)
	want := map[string]struct {
		content string
		isError bool
	}{
		"text":        {"one\ntwo", false},
		"resource":    {"before\nResource: file:///a.txt\ncontents of a", false},
		"structured":  {"summary\nStructured content:\n{\"a\":[\"x\",true],\"b\":2}", false},
		"unsupported": {"[Unsupported MCP content type: image]\n[Unsupported MCP content type: audio]\n[Unsupported MCP content type: resource_link]\n[Unsupported MCP content type: resource]\ntail", false},
		"empty":       {"(no output)", false},
		"emptytext":   {"(no output)", false},
		"big":         {strings.Repeat("é", MaxResultBytes/2) + "\n\n[MCP result truncated to 50KB]", false},
		"fails":       {"MCP tool error: disk full", true},
		"failsempty":  {"MCP tool error: (no output)", true},
	}
	for name, w := range want {
		t.Run(name, func(t *testing.T) {
			res := toolByDisplay(t, c, "mcp:r/"+name).Run(context.Background(), []byte(`{"text":"x"}`))
			if res.Content != w.content || res.IsError != w.isError {
				got := res.Content
				if len(got) > 200 {
					got = got[:100] + "..." + got[len(got)-100:]
				}
				t.Errorf("got %q (error %v), want error %v", got, res.IsError, w.isError)
			}
		})
	}
}

func TestCallSendsArgumentsUnchanged(t *testing.T) {
	srv := newSDKServer(t, nil, stateless, func(s *sdk.Server) {
		addTool(s, "echo", objectSchema, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return textResult(string(req.Params.Arguments)), nil
		})
	})
	c := connect(t, catalogServer(t, "e", entry{URL: srv.URL, AllowedTools: []string{"echo"}}))
	args := `{"text":"ü \u2028 \"q\"","n":12345678901234567890,"nested":{"a":[1,2]}}`
	res := c.Tools()[0].Run(context.Background(), []byte(args))
	if res.IsError || res.Content != `{"text":"ü \u2028 \"q\"","n":12345678901234567890,"nested":{"a":[1,2]}}` {
		t.Errorf("server received %q", res.Content)
	}
}

func TestCallServerErrorIsSanitized(t *testing.T) {
	srv := newSDKServer(t, nil, stateless, func(s *sdk.Server) {
		addTool(s, "leaky", objectSchema, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return nil, errors.New("failed with " + req.Extra.Header.Get("Authorization") + "\nsecond line")
		})
	})
	c := connect(t, catalogServer(t, "l", entry{URL: srv.URL, AllowedTools: []string{"leaky"}}))
	res := c.Tools()[0].Run(context.Background(), []byte(`{}`))
	if !res.IsError || res.Content != "MCP l: calling leaky: the server answered tools/call with an error: failed with Bearer [redacted] second line" {
		t.Fatalf("got %+v", res)
	}
	assertNoToken(t, "result", res.Content)
	if !strings.Contains(res.Content, "Bearer [redacted]") || strings.Contains(res.Content, "\n") {
		t.Errorf("got %q; want the token redacted on one line", res.Content)
	}
}

// blockingServer offers "wait", which blocks until its context ends and
// reports that on done.
func blockingServer(t *testing.T, httpOpts *sdk.StreamableHTTPOptions, timeoutMs int64) (*Client, <-chan struct{}, <-chan struct{}) {
	t.Helper()
	started := make(chan struct{}, 1)
	done := make(chan struct{}, 1)
	srv := newSDKServer(t, nil, httpOpts, func(s *sdk.Server) {
		addTool(s, "wait", objectSchema, func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			started <- struct{}{}
			select {
			case <-ctx.Done():
				done <- struct{}{}
				return nil, ctx.Err()
			case <-time.After(20 * time.Second):
				return textResult("never cancelled"), nil
			}
		})
	})
	c := connect(t, catalogServer(t, "b", entry{URL: srv.URL, AllowedTools: []string{"wait"}, CallTimeoutMs: timeoutMs}))
	return c, started, done
}

func TestCallCancelReachesServer(t *testing.T) {
	tests := []struct {
		name     string
		httpOpts *sdk.StreamableHTTPOptions
		protocol string
	}{
		// 2026-07-28: the call's own HTTP request ends.
		{"stateless", &sdk.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true}, "2026-07-28"},
		// Older protocol: the SDK sends notifications/cancelled.
		{"stateful", nil, "2025-11-25"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, started, serverDone := blockingServer(t, tt.httpOpts, 0)
			if c.Protocol() != tt.protocol {
				t.Fatalf("protocol %s, want %s", c.Protocol(), tt.protocol)
			}
			ctx, cancel := context.WithCancel(context.Background())
			ran := make(chan string, 1)
			go func() { ran <- c.Tools()[0].Run(ctx, []byte(`{}`)).Content }()
			waitFor(t, started, "the call to start")
			cancel()
			select {
			case got := <-ran:
				if got != "MCP tool call cancelled" {
					t.Errorf("result %q", got)
				}
			case <-time.After(2 * time.Second):
				t.Fatal("Run did not return promptly after cancel")
			}
			waitFor(t, serverDone, "the server handler to see the cancellation")
		})
	}
}

func TestCallTimeout(t *testing.T) {
	c, started, serverDone := blockingServer(t, &sdk.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true}, 300)
	start := time.Now()
	res := c.Tools()[0].Run(context.Background(), []byte(`{}`))
	waitFor(t, started, "the call to start")
	if !res.IsError || res.Content != "MCP b: calling wait: no reply within 300ms" {
		t.Errorf("got %+v", res)
	}
	if d := time.Since(start); d < 300*time.Millisecond || d > 5*time.Second {
		t.Errorf("took %v", d)
	}
	waitFor(t, serverDone, "the server handler to see the timeout")
}

func TestCallDefaultTimeout(t *testing.T) {
	s := catalogServer(t, "d", entry{URL: "https://example.com", AllowedTools: []string{"x"}})
	if s.CallTimeout != 30*time.Second {
		t.Fatal(s.CallTimeout)
	}
}

func TestCallOversizeResponseRefused(t *testing.T) {
	for _, tt := range []struct {
		name     string
		httpOpts *sdk.StreamableHTTPOptions
	}{
		{"event stream", stateless},
		{"json", &sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := newSDKServer(t, nil, tt.httpOpts, func(s *sdk.Server) {
				addTool(s, "huge", objectSchema, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
					return textResult(strings.Repeat("x", MaxResponseBytes+1)), nil
				})
				addTool(s, "small", objectSchema, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
					return textResult("fine"), nil
				})
			})
			c := connect(t, catalogServer(t, "o", entry{URL: srv.URL, AllowedTools: []string{"huge", "small"}}))
			res := toolByDisplay(t, c, "mcp:o/huge").Run(context.Background(), []byte(`{}`))
			if !res.IsError || res.Content != "MCP o: calling huge: the reply to tools/call was larger than 10 MB" {
				t.Errorf("huge: %+v", res.Content)
			}
			// The client recovers: with JSON responses the SDK drops the
			// connection, and the next call reconnects.
			res = toolByDisplay(t, c, "mcp:o/small").Run(context.Background(), []byte(`{}`))
			if res.IsError || res.Content != "fine" {
				t.Errorf("small after huge: %+v", res)
			}
		})
	}
}

func TestCallsRunConcurrently(t *testing.T) {
	srv := newSDKServer(t, nil, stateless, func(s *sdk.Server) {
		addTool(s, "echo", objectSchema, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return textResult(string(req.Params.Arguments)), nil
		})
	})
	c := connect(t, catalogServer(t, "e", entry{URL: srv.URL, AllowedTools: []string{"echo"}}))
	tool := c.Tools()[0]
	errs := make(chan string, 8)
	for i := range 8 {
		go func() {
			args := `{"i":` + string(rune('0'+i)) + `}`
			if res := tool.Run(context.Background(), []byte(args)); res.Content != args {
				errs <- res.Content
				return
			}
			errs <- ""
		}()
	}
	for range 8 {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
}

func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}
