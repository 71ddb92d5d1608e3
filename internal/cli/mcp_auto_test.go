package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// projectMCP writes .mcp.json with the SDK-less test server as "echo".
func projectMCP(t *testing.T, h *hookRun) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	script, err := filepath.Abs("../mcp/testdata/pyserver.py")
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal([]string{script, "normal"})
	h.write(".mcp.json", `{"mcpServers":{"echo":{"command":`+strconv.Quote(py)+`,"args":`+string(args)+`}}}`)
	h.env["PATH"] = os.Getenv("PATH")
}

func offersTool(r providertest.Request, name string) bool {
	for _, tl := range r.Chat.Tools {
		if tl.Function.Name == name {
			return true
		}
	}
	return false
}

// A project's .mcp.json server is used without --mcp once trusted, and
// its tool is mcp__echo__echo as under Claude Code: not at all in a
// one-shot run nobody trusted it in (one line says how), after a "y" in an
// interactive run (kept in the user's configuration, not asked again),
// and at once under enabledMcpjsonServers.
func TestMCPProjectServersWithoutFlag(t *testing.T) {
	h := newHookRun(t, "",
		providertest.Reply{Text: "No tools."},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "mcp__echo__echo", `{"text":"hi"}`)}},
		providertest.Reply{Text: "Echoed."},
		providertest.Reply{Text: "Again."},
	)
	projectMCP(t, h)
	h.env["XDG_CONFIG_HOME"] = filepath.Join(h.home, ".config")
	code, _, stderr := h.main("", "first")
	if code != 0 || !strings.Contains(stderr, "not started until you trust them: echo") {
		t.Fatalf("untrusted one-shot: exit %d: %s", code, stderr)
	}
	if offersTool(h.srv.Requests()[0], "mcp__echo__echo") {
		t.Fatal("an untrusted project server was used")
	}
	code, stdout, stderr := h.main("y\ncall it\ny\n/status\n/exit\n")
	if code != 0 || !strings.Contains(stdout, "Echoed.") || !strings.Contains(stderr, "Start them in this project?") {
		t.Fatalf("interactive: exit %d:\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "mcp: echo") {
		t.Errorf("the banner or /status does not name the server:\n%s", stdout)
	}
	reqs := h.srv.Requests()
	if got := toolMessage(reqs[2], "c1"); got != "py: hi" {
		t.Errorf("mcp__echo__echo answered %q", got)
	}
	code, _, stderr = h.main("", "again")
	if code != 0 || strings.Contains(stderr, "trust") || !offersTool(h.srv.Requests()[3], "mcp__echo__echo") {
		t.Fatalf("after the answer: exit %d: %s", code, stderr)
	}
}

// enabledMcpjsonServers in Claude Code's settings trusts a server at once;
// disabledMcpjsonServers keeps it out even under enableAllProjectMcpServers.
func TestMCPProjectServersTrustedBySettings(t *testing.T) {
	h := newHookRun(t, `{"enabledMcpjsonServers":["echo"]}`,
		providertest.Reply{Text: "One."},
		providertest.Reply{Text: "Two."},
	)
	projectMCP(t, h)
	if code, _, stderr := h.main("", "first"); code != 0 || !offersTool(h.srv.Requests()[0], "mcp__echo__echo") {
		t.Fatalf("exit %d, the server is not used: %s", code, stderr)
	}
	h.write(".claude/settings.local.json", `{"enableAllProjectMcpServers":true,"disabledMcpjsonServers":["echo"]}`)
	if code, _, stderr := h.main("", "second"); code != 0 || offersTool(h.srv.Requests()[1], "mcp__echo__echo") || strings.Contains(stderr, "trust") {
		t.Fatalf("exit %d, a disabled server is used or asked about: %s", code, stderr)
	}
}

// Servers added with `mcp add` (.tiny-agent/mcp.json) connect without
// --mcp; one that cannot start is named in one line and the run goes on
// with the others.
func TestMCPLocalServersWithoutFlag(t *testing.T) {
	h := newHookRun(t, "",
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "mcp__echo__echo", `{"text":"local"}`)}},
		providertest.Reply{Text: "Done."},
	)
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	script, err := filepath.Abs("../mcp/testdata/pyserver.py")
	if err != nil {
		t.Fatal(err)
	}
	h.env["PATH"] = os.Getenv("PATH")
	if code, _, stderr := h.main("", "mcp", "add", "echo", "--", py, script, "normal"); code != 0 {
		t.Fatalf("mcp add: %s", stderr)
	}
	if code, _, stderr := h.main("", "mcp", "add", "broken", "--", filepath.Join(h.dir, "no-such-server")); code != 0 {
		t.Fatalf("mcp add: %s", stderr)
	}
	code, stdout, stderr := h.main("", "use the server")
	if code != 0 || !strings.Contains(stdout, "Done.") {
		t.Fatalf("exit %d:\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "MCP broken: not used:") {
		t.Errorf("the broken server is not named:\n%s", stderr)
	}
	if got := toolMessage(h.srv.Requests()[1], "c1"); got != "py: local" {
		t.Errorf("mcp__echo__echo answered %q", got)
	}
}
