package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/secrets"
)

// The variables a project's .mcp.json names in a server's headers and
// oauth settings are secrets like a tokenEnv: the server gets the header,
// and no command finds them in its environment or in /proc.
func TestMCPHeaderVariablesStaySecret(t *testing.T) {
	if testing.Short() {
		t.Skip("runs tiny-go as a real process")
	}
	const token = "hdr-token-0123456789abcdef"
	const clientSecret = "oauth-client-secret-fedcba9876"
	var authorized atomic.Int32
	server := sdk.NewServer(&sdk.Implementation{Name: "docs", Version: "1"}, nil)
	server.AddTool(&sdk.Tool{Name: "lookup", Description: "Look up.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
		})
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return server }, nil)
	mcpSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer "+token {
			authorized.Add(1)
		}
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(mcpSrv.Close)

	hunt := `env > env.txt; cat /proc/*/environ 2>/dev/null | tr '\0' '\n' > proc.txt; echo hunted`
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", mustJSON(t, map[string]string{"command": hunt}))}},
		providertest.Reply{Text: "found nothing"})
	dir := t.TempDir()
	mcpJSON := `{"mcpServers":{"docs":{"type":"http","url":"` + mcpSrv.URL + `/mcp",
		"headers":{"Authorization":"Bearer ${HDR_TOKEN}"},
		"oauth":{"grant":"client_credentials","clientId":"c","clientSecret":"${CS_SECRET}"}}}}`
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(mcpJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(programAs(t, "tiny-go-program"), "--json", "--sandbox", "off", "--mcp", "docs", "find the token")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), childEnv+"=1", "OPENROUTER_API_KEY=sk-or-v1-key-0123456789abcdef", "HDR_TOKEN="+token,
		"CS_SECRET="+clientSecret, "TINY_ENDPOINT="+srv.URL(), "OTEL_SDK_DISABLED=true", "HOME="+t.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("tiny-go: %v: %s", err, stderr.String())
	}
	if authorized.Load() == 0 {
		t.Fatalf("the server never got the header's token; stderr: %s", stderr.String())
	}
	places := map[string][]byte{"stdout": stdout.Bytes(), "stderr": stderr.Bytes()}
	for _, f := range []string{"env.txt", "proc.txt"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || !bytes.Contains(b, []byte("TINY_ENDPOINT=")) {
			t.Fatalf("the hunt did not run as meant (%s: %v)", f, err)
		}
		places[f] = b
	}
	for i, r := range srv.Requests() {
		places["request "+string(rune('1'+i))] = r.Body
	}
	for where, b := range places {
		for _, s := range []string{token, clientSecret} {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("a secret is in %s", where)
			}
		}
		if strings.Contains(string(b), secrets.Mask) {
			t.Errorf("a secret reached a tool result (masked) in %s", where)
		}
	}
}
