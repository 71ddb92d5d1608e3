package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// discoverServer answers server/discover with discover and passes every
// other request to a real (stateful, so older-protocol) SDK server. It
// records the JSON-RPC method of every POST.
type discoverServer struct {
	*httptest.Server
	mu      sync.Mutex
	methods []string
}

func (s *discoverServer) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.methods)
}

func newDiscoverServer(t *testing.T, discover http.HandlerFunc) *discoverServer {
	t.Helper()
	legacy := sdk.NewServer(&sdk.Implementation{Name: "legacy", Version: "1"}, nil)
	addTool(legacy, "echo", objectSchema, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return textResult("ok"), nil
	})
	sdkHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return legacy }, nil)
	s := &discoverServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string `json:"method"`
			}
			json.Unmarshal(body, &msg)
			s.mu.Lock()
			s.methods = append(s.methods, msg.Method)
			s.mu.Unlock()
			if msg.Method == methodDiscover {
				discover(w, r)
				return
			}
		}
		sdkHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func rpcError(status, code int, message string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": 1, "error": map[string]any{"code": code, "message": message}})
	}
}

func plainStatus(status int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "BODY-SECRET", status)
	}
}

// Each failure of server/discover that is not the server saying it cannot
// speak the protocol fails the server with its own cause, after exactly
// one kind of request: no initialize follows.
func TestDiscoverFailureDoesNotFallBack(t *testing.T) {
	for _, tt := range []struct {
		name     string
		discover http.HandlerFunc
		kind     string
		want     string
	}{
		{"401", plainStatus(401), ErrorConnectionFailed, "the server answered server/discover with HTTP 401 Unauthorized"},
		{"403", plainStatus(403), ErrorConnectionFailed, "the server answered server/discover with HTTP 403 Forbidden"},
		{"404", plainStatus(404), ErrorConnectionFailed, "the server answered server/discover with HTTP 404 Not Found"},
		{"429", plainStatus(429), ErrorConnectionFailed, "the server answered server/discover with HTTP 429 Too Many Requests"},
		{"500", plainStatus(500), ErrorConnectionFailed, "the server answered server/discover with HTTP 500 Internal Server Error"},
		{"503", plainStatus(503), ErrorConnectionFailed, "the server answered server/discover with HTTP 503 Service Unavailable"},
		// A JSON-RPC "method not found" inside a 404 is still a 404.
		{"404 with method not found", rpcError(404, -32601, "no such method"), ErrorConnectionFailed, "the server answered server/discover with HTTP 404 Not Found: no such method"},
		{"other JSON-RPC error", rpcError(200, -32603, "internal trouble"), ErrorConnectionFailed, "the server answered server/discover with error -32603: internal trouble"},
		{"html", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, "<html>BODY-SECRET</html>")
		}, ErrorConnectionFailed, "not an MCP server: the reply to server/discover was text/html"},
		{"no content type", func(w http.ResponseWriter, r *http.Request) {
			w.Header()["Content-Type"] = nil
			w.Write([]byte{0, 1, 2})
		}, ErrorConnectionFailed, "not an MCP server: the reply to server/discover had no content type"},
		{"timeout", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
		}, ErrorTimeout, "no reply to server/discover within 400ms"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := newDiscoverServer(t, tt.discover)
			s := catalogServer(t, "fx", entry{URL: srv.URL, AllowedTools: []string{"echo"}})
			_, err := Connect(context.Background(), s, Options{ConnectTimeout: 400 * time.Millisecond})
			assertConnectError(t, err, tt.kind, "MCP fx: connecting: "+tt.want)
			for _, m := range srv.seen() {
				if m != methodDiscover {
					t.Errorf("requests %q: an older protocol was tried", srv.seen())
					break
				}
			}
			if len(srv.seen()) == 0 {
				t.Error("no request reached the server")
			}
		})
	}
}

// The server saying it cannot speak the protocol (method not found, or an
// unsupported version, as JSON-RPC errors in a 200 or a 400) is the one
// case where the older handshake follows.
func TestDiscoverUnsupportedFallsBack(t *testing.T) {
	for _, tt := range []struct {
		name     string
		discover http.HandlerFunc
	}{
		{"method not found", rpcError(200, -32601, "Method not found")},
		{"method not found in a 400", rpcError(400, -32601, "Method not found")},
		{"unsupported version code", rpcError(400, -32022, "unsupported")},
		{"unsupported version message", rpcError(400, -32000, "Bad Request: Unsupported protocol version: 2026-07-28")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := newDiscoverServer(t, tt.discover)
			c := connect(t, catalogServer(t, "fx", entry{URL: srv.URL, AllowedTools: []string{"echo"}}))
			if c.Protocol() != "2025-11-25" {
				t.Errorf("protocol %q", c.Protocol())
			}
			if got := srv.seen(); len(got) < 2 || got[0] != methodDiscover || got[1] != methodInitialize {
				t.Errorf("requests %q, want server/discover then initialize", got)
			}
			if res := c.Tools()[0].Run(context.Background(), []byte(`{}`)); res.IsError || res.Content != "ok" {
				t.Errorf("call: %+v", res)
			}
		})
	}
}

func TestCannotSpeak(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{&jsonErr{Code: -32601}, true},
		{&jsonErr{Code: -32022}, true},
		{&jsonErr{Code: -32602, Message: "Unsupported protocol version"}, true},
		{&jsonErr{Code: -32602, Message: "invalid params"}, false},
		{&jsonErr{Code: -32603}, false},
		{context.DeadlineExceeded, false},
		{io.EOF, false},
	} {
		if got := cannotSpeak(tt.err); got != tt.want {
			t.Errorf("cannotSpeak(%v) = %v", tt.err, got)
		}
	}
}

type jsonErr = jsonrpc.Error
