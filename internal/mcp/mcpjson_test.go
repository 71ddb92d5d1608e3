package mcp

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// .mcp.json as Claude Code, Cursor and VS Code write it: variables are
// expanded, members other tools add are ignored, type picks the transport.
func TestParseMCPJSON(t *testing.T) {
	data := []byte(`{"mcpServers": {
	  "fs": {"type": "stdio", "command": "npx", "args": ["-y", "${PKG:-server-fs}", "${HOME}"], "env": {"MODE": "${MODE}"}, "disabled": false},
	  "docs": {"type": "http", "url": "https://mcp.example.com/${TENANT}/mcp", "headers": {"x-api-key": "${DOCS_KEY}"}},
	  "old": {"type": "sse", "url": "http://localhost:9000/sse", "disallowedTools": ["rm"]}
	}, "otherTool": {"x": 1}}`)
	env := testEnv(map[string]string{"HOME": "/home/u", "MODE": "ro", "TENANT": "acme", "DOCS_KEY": "k-123"})
	c, err := ParseCatalog(data, env)
	if err != nil {
		t.Fatal(err)
	}
	byAlias := map[string]Server{}
	for _, s := range c.Servers {
		byAlias[s.Alias] = s
	}
	fs, docs, old := byAlias["fs"], byAlias["docs"], byAlias["old"]
	if fs.Command != "npx" || !slices.Equal(fs.Args, []string{"-y", "server-fs", "/home/u"}) || fs.Env["MODE"] != "ro" || fs.AllowedTools != nil {
		t.Errorf("fs = %v env %v", fs, fs.Env)
	}
	if docs.Endpoint != "https://mcp.example.com/acme/mcp" || docs.Headers["X-Api-Key"] != "k-123" || docs.SSE {
		t.Errorf("docs = %v headers %v", docs, docs.Headers)
	}
	if !old.SSE || !slices.Equal(old.DisallowedTools, []string{"rm"}) {
		t.Errorf("old = %v", old)
	}
	if strings.Contains(fmt.Sprint(docs), "k-123") {
		t.Errorf("a header value is printed: %v", docs)
	}
}

func TestExpandVars(t *testing.T) {
	env := testEnv(map[string]string{"A": "x", "EMPTY": ""})
	for in, want := range map[string]string{
		"plain": "plain", "${A}": "x", "a${A}b${A}": "axbx", "${B:-def}": "def", "${EMPTY:-d}": "d",
		"${EMPTY}": "", "$A": "$A", "${A:-}": "x",
	} {
		if got, err := expandVars(in, env); err != nil || got != want {
			t.Errorf("expandVars(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"${B}", "${A", "${1X}", "${}"} {
		if _, err := expandVars(in, env); err == nil {
			t.Errorf("expandVars(%q) succeeded", in)
		}
	}
}

func FuzzExpandVars(f *testing.F) {
	for _, s := range []string{"${A}", "${A:-b}", "x${", "${A}${B:-}", "$${A}}"} {
		f.Add(s)
	}
	env := testEnv(map[string]string{"A": "value"})
	f.Fuzz(func(t *testing.T, s string) {
		out, err := expandVars(s, env)
		if err == nil && !strings.Contains(s, "${") && out != s {
			t.Fatalf("%q changed to %q without a variable", s, out)
		}
	})
}

// Without allowedTools every listed tool is offered, minus disallowedTools;
// a server with no tools connects with none.
func TestOfferedWithoutAllowlist(t *testing.T) {
	url := startTSServer(t, "stateless")
	data := []byte(`{"mcpServers": {"all": {"type": "http", "url": "` + url + `"}, "some": {"url": "` + url + `", "disallowedTools": ["ask_name", "ask_later", "ask_form"]}}}`)
	c, err := ParseCatalog(data, testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"all": {"mcp:all/add", "mcp:all/ask_name", "mcp:all/ask_later", "mcp:all/ask_form"}, "some": {"mcp:some/add"}}
	for _, s := range c.Servers {
		cl, err := Connect(context.Background(), s, Options{ConnectTimeout: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tool := range cl.Tools() {
			got = append(got, tool.Definition().Display)
		}
		cl.Close()
		if !slices.Equal(got, want[s.Alias]) {
			t.Errorf("%s offers %q, want %q", s.Alias, got, want[s.Alias])
		}
	}

	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	r := newStdioRun(t)
	s := stdioCatalogServer(t, "none", stdioEntry{Command: node, Args: []string{tsServerScript(t), "notools"}})
	cl, err := Connect(context.Background(), s, r.opts)
	if err != nil {
		t.Fatalf("a server without tools: %v", err)
	}
	defer cl.Close()
	if n := len(cl.Tools()); n != 0 || cl.StartupLine() != "MCP none: connected (2025-11-25, 0 tools)" {
		t.Errorf("%d tools, %q", n, cl.StartupLine())
	}
}
