package cli

import (
	"os"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/mcp"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// TestApprovalOfMCPCallsInLineMode runs interactive mode without a
// terminal (line mode, the default ask mode) with a real stdio MCP
// server: each call shows the tool and its arguments, "n <reason>" denies
// one (the model is told why, the server never sees it), "a" allows the
// other.
func TestApprovalOfMCPCallsInLineMode(t *testing.T) {
	echo, _ := mcp.ToolName("py", "echo")
	env, _ := mcp.ToolName("py", "env")
	provider := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", echo, `{"text":"secret plan"}`), toolCall("c2", env, `{}`)}},
		providertest.Reply{Text: "done"},
	)
	c := newCLI(t, provider)
	pyCatalog(t, c, "normal", "")
	code, stdout, stderr := c.main("use the tools\nn   keep that to yourself\na\n", "--mcp", "py")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"◆ mcp:py/echo wants to: Call the MCP tool mcp:py/echo\n    {\n      \"text\": \"secret plan\"\n    }\nAllow? y = once, a = always allow every call of mcp:py/echo, n [reason] = deny, esc = abort: ",
		"◆ mcp:py/env wants to: Call the MCP tool mcp:py/env\n    {}\nAllow? ",
		"done",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	file, _ := os.ReadFile(c.sessions()[0])
	if strings.Contains(string(file), "py: secret plan") {
		t.Error("the denied call reached the server")
	}
	if !strings.Contains(string(file), `The user denied this tool call; it was not executed.\nReason given by the user: keep that to yourself`) {
		t.Error("the denial and its reason are not in the session")
	}
	if !strings.Contains(string(file), "MCP_TEST_DIR=") {
		t.Error("the allowed call did not run")
	}
	if st := c.state(); !st.Idle() {
		t.Fatal("the run is still open")
	}
}
