package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tiny-agent/tiny-go/internal/mcp"
	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
)

const mcpToken = "mcp-secret-7d1e9f"

// TestMCPToolThroughTheAgent runs a one-shot prompt whose model calls a
// tool of a real MCP server (the official SDK's) on loopback.
func TestMCPToolThroughTheAgent(t *testing.T) {
	var mu sync.Mutex
	var auth []string
	server := sdk.NewServer(&sdk.Implementation{Name: "docs", Version: "1"}, nil)
	server.AddTool(&sdk.Tool{
		Name:        "lookup",
		Description: "Look a word up.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"word":{"type":"string"}},"required":["word"]}`),
	}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var args struct{ Word string }
		_ = json.Unmarshal(req.Params.Arguments, &args)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "definition of " + args.Word}}}, nil
	})
	server.AddTool(&sdk.Tool{Name: "hidden", Description: "Not allowlisted.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "should not run"}}}, nil
		})
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil)
	mcpSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(mcpSrv.Close)

	name, err := mcp.ToolName("docs", "lookup")
	if err != nil {
		t.Fatal(err)
	}
	hidden, _ := mcp.ToolName("docs", "hidden")
	provider := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{
			toolCall("c1", name, `{"word":"durable"}`),
			toolCall("c2", hidden, `{}`),
		}},
		providertest.Reply{Text: "It means lasting."},
	)
	c := newCLI(t, provider)
	catalog := filepath.Join(t.TempDir(), "mcp.json")
	body := `{"servers":{"docs":{"url":"` + mcpSrv.URL + `/mcp","tokenEnv":"DOCS_TOKEN","allowedTools":["lookup"]}}}`
	if err := os.WriteFile(catalog, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	c.env["TINY_MCP_CONFIG"] = catalog
	c.env["DOCS_TOKEN"] = mcpToken

	code, stdout, stderr := c.main("", "--json", "--mcp", "docs", "define durable")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	evs := events(t, stdout)
	got := names(evs)
	if !strings.HasPrefix(got, "startup.started session.attached mcp.started mcp.completed startup.completed operation.started") {
		t.Fatalf("events: %s", got)
	}
	if m, _ := evs[0]["mcp"].([]any); len(m) != 1 || m[0] != "docs" {
		t.Fatalf("startup.started mcp: %v", evs[0]["mcp"])
	}
	if mc := evs[3]; mc["outcome"] != "succeeded" || mc["server"] != "docs" || mc["toolCount"] != 1.0 || mc["protocolVersion"] == "" {
		t.Fatalf("mcp.completed: %v", mc)
	}
	// Only the allowlisted tool was offered, under its model-facing name.
	offered := provider.Requests()[0].Chat.Tools
	var offeredNames []string
	for _, tl := range offered {
		offeredNames = append(offeredNames, tl.Function.Name)
	}
	if !strings.Contains(strings.Join(offeredNames, ","), name) || strings.Contains(strings.Join(offeredNames, ","), hidden) {
		t.Fatalf("offered tools: %v", offeredNames)
	}
	st := c.state()
	var results []string
	for _, m := range st.Transcript {
		if m.Role == session.RoleTool {
			results = append(results, *m.Content)
		}
	}
	if len(results) != 2 || results[0] != "definition of durable" || results[1] != session.ContentUnknownTool {
		t.Fatalf("tool results: %q", results)
	}
	// The MCP call is never replayable.
	for _, tc := range c.facts(t) {
		if strings.Contains(tc, `"toolStarted"`) && !strings.Contains(tc, `"replay":"never"`) {
			t.Fatalf("MCP toolStarted is replayable: %s", tc)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(auth) == 0 || auth[0] != "Bearer "+mcpToken {
		t.Fatalf("Authorization headers: %q", auth)
	}
	file, _ := os.ReadFile(c.sessions()[0])
	for what, s := range map[string]string{"stdout": stdout, "stderr": stderr, "session": string(file)} {
		if strings.Contains(s, mcpToken) {
			t.Fatalf("the token appears in %s", what)
		}
	}
}

func TestMCPUnknownAliasFailsBeforeSession(t *testing.T) {
	c := newCLI(t, providertest.New(t))
	catalog := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(catalog, []byte(`{"servers":{"docs":{"url":"http://127.0.0.1:1/mcp","allowedTools":["x"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c.env["TINY_MCP_CONFIG"] = catalog
	code, _, stderr := c.main("", "--mcp", "nope", "hi")
	if code != 2 || !strings.Contains(stderr, "nope") || len(c.sessions()) != 0 {
		t.Fatalf("exit %d, %q, %d sessions", code, stderr, len(c.sessions()))
	}
}

func TestMCPConnectFailureIsOneLine(t *testing.T) {
	c := newCLI(t, providertest.New(t))
	catalog := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(catalog, []byte(`{"servers":{"docs":{"url":"http://127.0.0.1:1/mcp","allowedTools":["x"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c.env["TINY_MCP_CONFIG"] = catalog
	code, stdout, stderr := c.main("", "--json", "--mcp", "docs", "hi")
	if code != 1 || !strings.Contains(stderr, "MCP docs:") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	evs := events(t, stdout)
	last := evs[len(evs)-1]
	if last["type"] != "startup.completed" || last["outcome"] != "failed" || last["errorType"] != "mcp_setup_error" {
		t.Fatalf("last event: %v", last)
	}
	if n := len(c.sessions()); n != 0 {
		t.Fatalf("a failed startup left %d session files for --continue to pick", n)
	}
}

// facts returns the raw lines of the only session file.
func (c *cliRun) facts(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(c.sessions()[0])
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}
