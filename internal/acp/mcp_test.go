package acp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tiny-agent/tiny-go/internal/mcp"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// The editor's MCP servers are merged with the catalog: one the catalog
// knows is connected with its allowedTools (a real MCP server of the
// official SDK here), one it does not know is named on stderr.
func TestClientMCPServersMergedWithTheCatalog(t *testing.T) {
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
	mcpSrv := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil))
	t.Cleanup(mcpSrv.Close)
	catalog := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(catalog, []byte(`{"servers":{"docs":{"url":"`+mcpSrv.URL+`/mcp","allowedTools":["lookup"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	name, err := mcp.ToolName("docs", "lookup")
	if err != nil {
		t.Fatal(err)
	}
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: "c1", Name: name, Arguments: `{"word":"durable"}`}}},
		providertest.Reply{Text: "It means lasting."},
	)
	dir := t.TempDir()
	p := startAgentEnv(t, srv, dir, []string{mcp.ConfigEnv + "=" + catalog}, "--approval", "auto")
	p.initialize()
	resp, _ := p.call("session/new", map[string]any{"cwd": dir, "mcpServers": []any{
		map[string]any{"type": "http", "name": "docs", "url": mcpSrv.URL + "/mcp", "headers": []any{}},
		map[string]any{"name": "elsewhere", "command": "/bin/false", "args": []any{}, "env": []any{}},
	}})
	if resp["error"] != nil {
		t.Fatalf("session/new: %v", resp)
	}
	id := resp["result"].(map[string]any)["sessionId"]
	resp, notes := p.call("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "define durable"}}})
	if resp["error"] != nil {
		t.Fatalf("prompt: %v", resp)
	}
	if !strings.Contains(dump(notes), "definition of durable") {
		t.Fatalf("the catalog's server was not called: %s", dump(notes))
	}
	if !strings.Contains(p.stderr.String(), `MCP server "elsewhere" from the editor is not connected`) {
		t.Fatalf("stderr: %s", p.stderr.String())
	}
}
