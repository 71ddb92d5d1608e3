package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestConnectListAndAllowlist(t *testing.T) {
	srv := newSDKServer(t, &sdk.ServerOptions{PageSize: 1}, &sdk.StreamableHTTPOptions{Stateless: true}, func(s *sdk.Server) {
		for _, name := range []string{"alpha", "beta", "gamma"} {
			addTool(s, name, objectSchema, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return textResult(name), nil
			})
		}
	})
	c := connect(t, catalogServer(t, "docs", entry{URL: srv.URL + "/", AllowedTools: []string{"gamma", "alpha"}}))

	if c.Protocol() != PreferredProtocol {
		t.Errorf("protocol %q, want %q", c.Protocol(), PreferredProtocol)
	}
	if got, want := c.StartupLine(), "MCP docs: connected (2026-07-28, 2 tools)"; got != want {
		t.Errorf("startup line %q, want %q", got, want)
	}
	got := c.Tools()
	if len(got) != 2 {
		t.Fatalf("%d tools offered, want 2", len(got))
	}
	def := got[0].Definition()
	if def.Name != must(ToolName("docs", "gamma")) || def.Display != "mcp:docs/gamma" || def.Description != "the gamma tool" {
		t.Errorf("definition %+v", def)
	}
	if got[1].Definition().Display != "mcp:docs/alpha" {
		t.Errorf("second tool %s, want allowlist order", got[1].Definition().Display)
	}
	if !strings.Contains(string(def.Parameters), `"description":"what to echo"`) {
		t.Errorf("parameters %s", def.Parameters)
	}
	if r := got[0].Replay(); r.Policy != "never" || r.Key != "mcp:docs:gamma" {
		t.Errorf("replay %+v", r)
	}
	wantID := `{"kind":"mcp","endpoint":"` + srv.URL + `/","authHeader":"Authorization","tool":"gamma"}`
	if def.DefinitionIdentity != wantID {
		t.Errorf("identity %s, want %s", def.DefinitionIdentity, wantID)
	}
	assertNoToken(t, "definition", def.Name+def.Description+string(def.Parameters)+def.DefinitionIdentity)

	res := got[0].Run(context.Background(), []byte(`{"text":"x"}`))
	if res.IsError || res.Content != "gamma" {
		t.Errorf("run: %+v", res)
	}
	// discover, three tools/list pages of one tool each, the call; every
	// request carried the bearer token.
	auth := srv.authHeaders()
	if len(auth) != 5 {
		t.Errorf("only %d requests seen", len(auth))
	}
	for i, h := range auth {
		if h != "Bearer "+testToken {
			t.Errorf("request %d Authorization %q", i, h)
		}
	}
}

func TestConnectFallsBackToOlderProtocol(t *testing.T) {
	// A stateful SDK server cannot speak 2026-07-28; the client falls back
	// to the newest handshake version and reports it.
	srv := newSDKServer(t, nil, nil, func(s *sdk.Server) {
		addTool(s, "echo", objectSchema, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return textResult(string(req.Params.Arguments)), nil
		})
	})
	c := connect(t, catalogServer(t, "old", entry{URL: srv.URL, AllowedTools: []string{"echo"}}))
	if c.Protocol() != "2025-11-25" {
		t.Errorf("protocol %q, want 2025-11-25", c.Protocol())
	}
	if got, want := c.StartupLine(), "MCP old: connected (2025-11-25, 1 tools)"; got != want {
		t.Errorf("startup line %q, want %q", got, want)
	}
	res := c.Tools()[0].Run(context.Background(), []byte(`{"text":"hi"}`))
	if res.IsError || res.Content != `{"text":"hi"}` {
		t.Errorf("run: %+v", res)
	}
}

func TestConnectRestrictedServerVersion(t *testing.T) {
	srv := newSDKServer(t, &sdk.ServerOptions{SupportedProtocolVersions: []string{"2025-06-18"}}, nil, func(s *sdk.Server) {
		addTool(s, "echo", objectSchema, nil)
	})
	c := connect(t, catalogServer(t, "old", entry{URL: srv.URL, AllowedTools: []string{"echo"}}))
	if c.Protocol() != "2025-06-18" {
		t.Errorf("protocol %q, want 2025-06-18", c.Protocol())
	}
}

func TestConnectMissingAllowlistedTool(t *testing.T) {
	srv := newSDKServer(t, nil, &sdk.StreamableHTTPOptions{Stateless: true}, func(s *sdk.Server) {
		addTool(s, "present", objectSchema, nil)
	})
	_, err := Connect(context.Background(), catalogServer(t, "docs", entry{URL: srv.URL, AllowedTools: []string{"present", "absent"}}), Options{})
	assertConnectError(t, err, ErrorConnectionFailed, "MCP docs: listing tools: MCP allowlisted tool is missing: absent")
}

func TestConnectTooManyTools(t *testing.T) {
	srv := newSDKServer(t, &sdk.ServerOptions{PageSize: 10}, &sdk.StreamableHTTPOptions{Stateless: true}, func(s *sdk.Server) {
		for i := range MaxToolsPerServer + 1 {
			addTool(s, fmt.Sprintf("t%02d", i), objectSchema, nil)
		}
	})
	_, err := Connect(context.Background(), catalogServer(t, "big", entry{URL: srv.URL, AllowedTools: []string{"t00"}}), Options{})
	assertConnectError(t, err, ErrorConnectionFailed, "MCP big: listing tools: tools/list has more than 64 tools")
}

func TestConnectExactlyMaxTools(t *testing.T) {
	srv := newSDKServer(t, &sdk.ServerOptions{PageSize: 10}, &sdk.StreamableHTTPOptions{Stateless: true}, func(s *sdk.Server) {
		for i := range MaxToolsPerServer {
			addTool(s, fmt.Sprintf("t%02d", i), objectSchema, nil)
		}
	})
	c := connect(t, catalogServer(t, "big", entry{URL: srv.URL, AllowedTools: []string{"t63"}}))
	if len(c.Tools()) != 1 {
		t.Fatalf("%d tools", len(c.Tools()))
	}
}

func TestConnectRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := Connect(context.Background(), catalogServer(t, "gone", entry{URL: url, AllowedTools: []string{"x"}}), Options{})
	var ce *ConnectError
	if !errors.As(err, &ce) || ce.Type != ErrorConnectionFailed || ce.Alias != "gone" {
		t.Fatalf("err = %#v", err)
	}
	if !strings.HasPrefix(err.Error(), "MCP gone: connecting: cannot connect: ") || !strings.Contains(err.Error(), "refused") {
		t.Errorf("err = %q", err)
	}
	assertNoToken(t, "error", err.Error())
}

func TestConnectTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	start := time.Now()
	_, err := Connect(context.Background(), catalogServer(t, "slow", entry{URL: srv.URL, AllowedTools: []string{"x"}}), Options{ConnectTimeout: 300 * time.Millisecond})
	assertConnectError(t, err, ErrorTimeout, "MCP slow: connecting: no reply to server/discover within 300ms")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("connect took %v", d)
	}
}

func TestConnectDefaultTimeoutIsTenSeconds(t *testing.T) {
	if DefaultConnectTimeout != 10*time.Second {
		t.Fatal(DefaultConnectTimeout)
	}
}

func TestConnectUnauthorizedShowsServerTextWithoutToken(t *testing.T) {
	// The server echoes the token in its JSON-RPC error: its message is
	// shown, the token never.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"bad token %s server text"}}`, r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	_, err := Connect(context.Background(), catalogServer(t, "auth", entry{URL: srv.URL, AllowedTools: []string{"x"}}), Options{})
	assertConnectError(t, err, ErrorConnectionFailed, "MCP auth: connecting: the server answered server/discover with HTTP 401 Unauthorized: bad token Bearer [redacted] server text")
}

func TestConnectRefusesRedirect(t *testing.T) {
	var leaked atomic.Bool
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" {
			leaked.Store(true)
		}
	}))
	defer target.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL, http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	_, err := Connect(context.Background(), catalogServer(t, "r", entry{URL: srv.URL, AllowedTools: []string{"x"}}), Options{})
	assertConnectError(t, err, ErrorConnectionFailed, "MCP r: connecting: the server answered server/discover with HTTP 307 Temporary Redirect")
	if leaked.Load() {
		t.Error("the token followed a redirect")
	}
}

func TestCloseIsIdempotentAndEndsCalls(t *testing.T) {
	srv := newSDKServer(t, nil, &sdk.StreamableHTTPOptions{Stateless: true}, func(s *sdk.Server) {
		addTool(s, "echo", objectSchema, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return textResult("ok"), nil
		})
	})
	c := connect(t, catalogServer(t, "c", entry{URL: srv.URL, AllowedTools: []string{"echo"}}))
	tool := c.Tools()[0]
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	res := tool.Run(context.Background(), []byte(`{}`))
	if !res.IsError || res.Content != "MCP c: calling echo: the MCP client is closed" {
		t.Errorf("call after close: %+v", res)
	}
}

func TestConnectAllClosesOnFailure(t *testing.T) {
	var deletes atomic.Int32
	good := newSDKServer(t, nil, nil, func(s *sdk.Server) { addTool(s, "echo", objectSchema, nil) })
	counting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			deletes.Add(1)
		}
		good.Config.Handler.ServeHTTP(w, r)
	}))
	defer counting.Close()
	bad := httptest.NewServer(http.NotFoundHandler())
	defer bad.Close()

	servers := []Server{
		catalogServer(t, "good", entry{URL: counting.URL, AllowedTools: []string{"echo"}}),
		catalogServer(t, "bad", entry{URL: bad.URL, AllowedTools: []string{"x"}}),
	}
	cs, err := ConnectAll(context.Background(), servers, Options{})
	if cs != nil || err == nil || !strings.HasPrefix(err.Error(), "MCP bad: connecting: the server answered server/discover with HTTP 404 Not Found") {
		t.Fatalf("ConnectAll = %v, %v", cs, err)
	}
	// The stateful good server got its session deleted: it was closed.
	if deletes.Load() != 1 {
		t.Errorf("%d DELETEs, want 1", deletes.Load())
	}

	cs, err = ConnectAll(context.Background(), servers[:1], Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs.Tools()) != 1 || cs.Tools()[0].Definition().Display != "mcp:good/echo" {
		t.Errorf("tools %v", cs.Tools())
	}
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}
}

func assertConnectError(t *testing.T, err error, kind, msg string) {
	t.Helper()
	var ce *ConnectError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v (%T), want a *ConnectError", err, err)
	}
	if ce.Type != kind || err.Error() != msg {
		t.Errorf("err = %q (%s), want %q (%s)", err, ce.Type, msg, kind)
	}
	assertNoToken(t, "error", err.Error())
	if strings.Contains(err.Error(), "BODY-SECRET") {
		t.Errorf("error quotes the response body: %q", err)
	}
}

func TestCallReconnectsAfterServerForgetsSession(t *testing.T) {
	newHandler := func() http.Handler {
		server := sdk.NewServer(&sdk.Implementation{Name: "restartable", Version: "1"}, nil)
		addTool(server, "echo", objectSchema, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return textResult("ok"), nil
		})
		return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil)
	}
	var current atomic.Pointer[http.Handler]
	h := newHandler()
	current.Store(&h)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		(*current.Load()).ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close) // after the client's cleanup, which ends its GET stream
	c := connect(t, catalogServer(t, "st", entry{URL: srv.URL, AllowedTools: []string{"echo"}}))
	tool := c.Tools()[0]
	if res := tool.Run(context.Background(), []byte(`{}`)); res.Content != "ok" {
		t.Fatalf("first call: %+v", res)
	}

	restarted := newHandler() // a restart: the old session id is unknown
	current.Store(&restarted)
	res := tool.Run(context.Background(), []byte(`{}`))
	if !res.IsError || res.Content != "MCP st: calling echo: the server answered tools/call with HTTP 404 Not Found" {
		t.Errorf("call into the lost session: %+v", res)
	}
	if res := tool.Run(context.Background(), []byte(`{}`)); res.IsError || res.Content != "ok" {
		t.Errorf("call after reconnect: %+v", res)
	}
}

func TestConnectHTTPS(t *testing.T) {
	server := sdk.NewServer(&sdk.Implementation{Name: "tls", Version: "1"}, nil)
	addTool(server, "echo", objectSchema, nil)
	srv := httptest.NewUnstartedServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, &sdk.StreamableHTTPOptions{Stateless: true}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	srv.StartTLS()
	defer srv.Close()
	s := catalogServer(t, "tls", entry{URL: srv.URL, AllowedTools: []string{"echo"}})

	_, err := Connect(context.Background(), s, Options{})
	assertConnectError(t, err, ErrorConnectionFailed, "MCP tls: connecting: TLS certificate not trusted")

	c, err := Connect(context.Background(), s, Options{Transport: srv.Client().Transport})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.StartupLine() != "MCP tls: connected (2026-07-28, 1 tools)" {
		t.Error(c.StartupLine())
	}
}
