package mcp

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tsServerScript is the MCP server built on the official TypeScript SDK
// (internal/mcp/testdata/ts, installed by `npm ci --prefix
// internal/mcp/testdata/ts`, which .ci/run does).
func tsServerScript(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed (.ci/run installs it)")
	}
	dir, err := filepath.Abs("testdata/ts")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules/@modelcontextprotocol/sdk")); err != nil {
		t.Skip("run: npm ci --prefix internal/mcp/testdata/ts (.ci/run does)")
	}
	return filepath.Join(dir, "server.mjs")
}

// startTSServer starts the TypeScript SDK server in an HTTP mode and
// returns its URL; it is killed when the test ends.
func startTSServer(t *testing.T, mode string) string {
	t.Helper()
	script := tsServerScript(t)
	cmd := exec.Command("node", script, mode)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("the %s server printed no URL: %v", mode, err)
	}
	return strings.TrimSpace(line)
}

// TypeScript-SDK servers refuse server/discover with HTTP 400 and an error
// whose id is null (a stateful one: "Invalid or missing session ID"); the
// client falls back to initialize, connects, and its tools run.
func TestTypeScriptSDKServers(t *testing.T) {
	for _, mode := range []string{"stdio", "stateless", "stateful", "sse"} {
		t.Run(mode, func(t *testing.T) {
			var s Server
			opts := Options{ConnectTimeout: 20 * time.Second}
			if mode == "stdio" {
				node, err := exec.LookPath("node")
				if err != nil {
					t.Skip("node is not installed")
				}
				s = stdioCatalogServer(t, "ts", stdioEntry{Command: node, Args: []string{tsServerScript(t), "stdio"}, AllowedTools: []string{"add"}})
				r := newStdioRun(t)
				opts = r.opts
				opts.ConnectTimeout = 20 * time.Second
			} else {
				s = catalogServer(t, "ts", entry{URL: startTSServer(t, mode), AllowedTools: []string{"add"}})
				s.SSE = mode == "sse"
			}
			c, err := Connect(context.Background(), s, opts)
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer c.Close()
			if c.Protocol() != "2025-11-25" {
				t.Errorf("protocol %q, want the TypeScript SDK's 2025-11-25", c.Protocol())
			}
			res := c.tools[0].Run(context.Background(), []byte(`{"a":2,"b":3}`))
			if res.IsError || res.Content != "sum=5 via "+mode {
				t.Fatalf("add: %+v", res)
			}
			// A second call on the same session (stateful: the session id).
			if res := c.tools[0].Run(context.Background(), []byte(`{"a":1,"b":1}`)); res.Content != "sum=2 via "+mode {
				t.Fatalf("second add: %+v", res)
			}
		})
	}
}

// When the fallback fails too, the server's own words are shown.
func TestConnectFailureShowsServerText(t *testing.T) {
	var methods []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		methods = append(methods, r.Header.Get("Mcp-Method"))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: this server wants a tenant header"},"id":null}`))
	}))
	defer srv.Close()
	_, err := Connect(context.Background(), catalogServer(t, "fx", entry{URL: srv.URL, AllowedTools: []string{"x"}}), Options{})
	assertConnectError(t, err, ErrorConnectionFailed, "MCP fx: connecting: the server answered initialize with HTTP 400 Bad Request: Bad Request: this server wants a tenant header")
	if len(methods) != 2 {
		t.Errorf("%d requests, want server/discover then initialize", len(methods))
	}
}
