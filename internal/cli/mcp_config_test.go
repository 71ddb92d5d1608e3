package cli

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/mcp"
	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// startTSMCPServer starts the MCP server built on the official TypeScript
// SDK (internal/mcp/testdata/ts) in an HTTP mode and returns its URL.
func startTSMCPServer(t *testing.T, mode string) string {
	t.Helper()
	script, err := filepath.Abs("../mcp/testdata/ts/server.mjs")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed (.ci/run installs it)")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(script), "node_modules")); err != nil {
		t.Skip("run: npm ci --prefix internal/mcp/testdata/ts (.ci/run does)")
	}
	cmd := exec.Command("node", script, mode)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(line)
}

// `mcp add` writes .mcp.json like `claude mcp add`; a run picks the server
// with --mcp, every tool is offered without an allowlist, and the call
// runs on a stateful TypeScript-SDK server. `mcp remove` takes it out.
func TestMCPAddRunRemove(t *testing.T) {
	url := startTSMCPServer(t, "stateful")
	add, _ := mcp.ToolName("ts", "add")
	provider := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", add, `{"a":2,"b":3}`)}},
		providertest.Reply{Text: "5"},
	)
	c := newCLI(t, provider)
	code, stdout, stderr := c.main("", "mcp", "add", "--transport", "http", "--scope", "project", "-H", "X-Team: ${TEAM:-core}", "ts", url)
	if code != 0 || !strings.Contains(stdout, "Added http MCP server ts to "+filepath.Join(c.dir, ".mcp.json")+" (project)") {
		t.Fatalf("add: exit %d %q %q", code, stdout, stderr)
	}
	written, _ := os.ReadFile(filepath.Join(c.dir, ".mcp.json"))
	if !strings.Contains(string(written), `"mcpServers"`) || !strings.Contains(string(written), `"X-Team": "${TEAM:-core}"`) {
		t.Errorf(".mcp.json: %s", written)
	}
	if code, _, stderr := c.main("", "mcp", "add", "--transport", "http", "--scope", "project", "ts", url); code != 2 || !strings.Contains(stderr, "already exists") {
		t.Errorf("second add: exit %d %q", code, stderr)
	}

	code, stdout, stderr = c.main("", "mcp", "list")
	if code != 0 || !strings.Contains(stdout, "add, ask_name") || !strings.Contains(stdout, "project: "+filepath.Join(c.dir, ".mcp.json")) {
		t.Errorf("list: exit %d %q %q", code, stdout, stderr)
	}

	if code, _, stderr := c.main("", "--mcp", "ts", "add 2 and 3"); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	var offered []string
	for _, tl := range provider.Requests()[0].Chat.Tools {
		offered = append(offered, tl.Function.Name)
	}
	if ask, _ := mcp.ToolName("ts", "ask_name"); !strings.Contains(strings.Join(offered, ","), add) || !strings.Contains(strings.Join(offered, ","), ask) {
		t.Errorf("offered %v: without allowedTools every tool is offered", offered)
	}
	var results []string
	for _, m := range c.state().Transcript {
		if m.Role == session.RoleTool {
			results = append(results, *m.Content)
		}
	}
	if len(results) != 1 || results[0] != "sum=5 via stateful" {
		t.Errorf("tool results %q", results)
	}

	if code, stdout, _ := c.main("", "mcp", "remove", "ts"); code != 0 || !strings.Contains(stdout, "Removed MCP server ts") {
		t.Errorf("remove: exit %d %q", code, stdout)
	}
	if code, _, stderr := c.main("", "mcp", "remove", "ts"); code != 2 || !strings.Contains(stderr, "no MCP server ts") {
		t.Errorf("second remove: exit %d %q", code, stderr)
	}
}

// A one-shot run without a terminal declines a server's form and says so
// in one line; the call goes on with the server's answer to that.
func TestMCPElicitationDeclinedWithoutTerminal(t *testing.T) {
	url := startTSMCPServer(t, "stateful")
	ask, _ := mcp.ToolName("ts", "ask_later")
	provider := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", ask, `{}`)}},
		providertest.Reply{Text: "ok"},
	)
	c := newCLI(t, provider)
	c.write(".mcp.json", `{"mcpServers":{"ts":{"type":"http","url":"`+url+`"}}}`)
	code, _, stderr := c.main("", "--mcp", "ts", "ask me")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "MCP ts asked for input (What is your name?); declined: there is no terminal to answer on\n") {
		t.Errorf("stderr %q", stderr)
	}
	var results []string
	for _, m := range c.state().Transcript {
		if m.Role == session.RoleTool {
			results = append(results, *m.Content)
		}
	}
	if len(results) != 1 || results[0] != "action=decline content=null" {
		t.Errorf("results %q", results)
	}
}
