package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const testToken = "tok-3f9c2a7e1b5d"

// sdkServer is a real MCP server from the official SDK on loopback,
// recording the Authorization header of every request.
type sdkServer struct {
	*httptest.Server
	mu   sync.Mutex
	auth []string
}

func (s *sdkServer) authHeaders() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auth...)
}

func newSDKServer(t *testing.T, opts *sdk.ServerOptions, httpOpts *sdk.StreamableHTTPOptions, setup func(*sdk.Server)) *sdkServer {
	t.Helper()
	server := sdk.NewServer(&sdk.Implementation{Name: "test-server", Version: "1"}, opts)
	setup(server)
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, httpOpts)
	s := &sdkServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		s.mu.Unlock()
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// addTool registers a raw tool whose handler is h.
func addTool(s *sdk.Server, name, schema string, h sdk.ToolHandler) {
	s.AddTool(&sdk.Tool{Name: name, Description: "the " + name + " tool", InputSchema: json.RawMessage(schema)}, h)
}

const objectSchema = `{"type":"object","properties":{"text":{"type":"string","description":"what to echo"}},"required":["text"]}`

func textResult(text string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}
}

// testEnv is an environment holding only the given variables.
func testEnv(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

// entry is a catalog server entry for tests.
type entry struct {
	URL           string   `json:"url"`
	TokenEnv      string   `json:"tokenEnv,omitzero"`
	AllowedTools  []string `json:"allowedTools,omitzero"`
	CallTimeoutMs int64    `json:"callTimeoutMs,omitzero"`
}

// catalogServer parses a one-server catalog whose token is testToken.
func catalogServer(t *testing.T, alias string, e entry) Server {
	t.Helper()
	if e.TokenEnv == "" {
		e.TokenEnv = "TEST_MCP_TOKEN"
	}
	data, err := jsonv2.Marshal(map[string]any{"servers": map[string]entry{alias: e}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseCatalog(data, testEnv(map[string]string{e.TokenEnv: testToken}))
	if err != nil {
		t.Fatalf("catalog: %v", err)
	}
	return c.Servers[0]
}

func connect(t *testing.T, s Server) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := Connect(ctx, s, Options{})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func toolByDisplay(t *testing.T, c *Client, display string) *Tool {
	t.Helper()
	for _, tool := range c.tools {
		if tool.def.Display == display {
			return tool
		}
	}
	t.Fatalf("no tool %s among %d", display, len(c.tools))
	return nil
}

func assertNoToken(t *testing.T, what, s string) {
	t.Helper()
	if strings.Contains(s, testToken) {
		t.Errorf("%s contains the token: %q", what, s)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprint(err))
	}
	return v
}
