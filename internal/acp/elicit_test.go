package acp_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/mcp"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// startTSServer starts the stateful TypeScript-SDK MCP server of
// internal/mcp's tests and returns a catalog that knows it as "ts", with
// its URL.
func startTSServer(t *testing.T) (catalog, url string) {
	t.Helper()
	script, _ := filepath.Abs("../mcp/testdata/ts/server.mjs")
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed (.ci/run installs it)")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(script), "node_modules")); err != nil {
		t.Skip("run: npm ci --prefix internal/mcp/testdata/ts (.ci/run does)")
	}
	cmd := exec.Command("node", script, "stateful")
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
	url = strings.TrimSpace(line)
	catalog = filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(catalog, []byte(`{"servers":{"ts":{"url":"`+url+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return catalog, url
}

// elicitRun has the model call the ts server's tool once through an SDK
// client in scenario, and returns what the client saw and what the server
// answered the call with.
func elicitRun(t *testing.T, tool, scenario string, env ...string) (seen map[string]any, result string) {
	t.Helper()
	catalog, url := startTSServer(t)
	name, _ := mcp.ToolName("ts", tool)
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: "c1", Name: name, Arguments: `{}`}}},
		providertest.Reply{Text: "done"},
	)
	seen = sdkClient(t, srv, t.TempDir(), scenario, append(env, mcp.ConfigEnv+"="+catalog, "ACP_MCP="+url)...)
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	msgs := reqs[1].Chat.Messages
	if m := msgs[len(msgs)-1]; m.Role == "tool" && m.Content != nil {
		result = *m.Content
	}
	return seen, result
}

// A client that announces form elicitation gets the MCP server's form as
// elicitation/create, scoped to the session, with the server's schema; its
// accept (typed values), decline and cancel reach the server as such.
func TestElicitationOverACP(t *testing.T) {
	for _, tt := range []struct {
		answer, want string
	}{
		{`{"action":"accept","content":{"email":"ada@example.com","tier":"pro","name":"tiny","replicas":5,"features":["docs","lint"]}}`,
			// The MCP Go SDK fills in the schema's defaults the answer left out.
			`action=accept content={"email":"ada@example.com","features":["docs","lint"],"name":"tiny","public":false,"region":"eu","replicas":5,"tier":"pro"}`},
		{`{"action":"decline"}`, `action=decline content=null`},
		{`{"action":"cancel"}`, `action=cancel content=null`},
	} {
		seen, result := elicitRun(t, "ask_form", "elicit", "ACP_ELICIT_ANSWER="+tt.answer)
		if result != tt.want {
			t.Errorf("the server answered %q, want %q", result, tt.want)
		}
		forms, _ := seen["elicitations"].([]any)
		if len(forms) != 1 {
			t.Fatalf("%d forms", len(forms))
		}
		form := forms[0].(map[string]any)
		props, _ := form["requestedSchema"].(map[string]any)["properties"].(map[string]any)
		if form["sessionId"] != seen["sessionId"] || form["toolCallId"] != "c1" || form["mode"] != "form" || form["message"] != "MCP server ts asks: Set up the project" || len(props) != 8 {
			t.Errorf("the form: %v", form)
		}
		if len(seen["permissions"].([]any)) != 0 {
			t.Errorf("a permission request besides the form: %v", seen["permissions"])
		}
	}
	// A client that announced forms but answers method-not-found is asked
	// with a permission request.
	seen, result := elicitRun(t, "ask_name", "elicit", "ACP_OPTION=send-defaults")
	if result != `action=accept content={"age":36,"name":"Ada"}` || len(seen["permissions"].([]any)) != 1 {
		t.Errorf("fallback: the server answered %q; permissions %v", result, seen["permissions"])
	}
}

// A client without form elicitation gets a permission request: sending
// the defaults, named with what is sent, or declining; a form whose
// required field has no default can only be declined; a cancelled
// question cancels.
func TestElicitationByPermissionOverACP(t *testing.T) {
	for _, tt := range []struct {
		tool, option, want string
		names              []string
	}{
		{"ask_name", "send-defaults", `action=accept content={"age":36,"name":"Ada"}`, []string{"Send Age=36, Name=Ada", "Decline"}},
		{"ask_name", "decline", `action=decline content=null`, nil},
		{"ask_name", "cancel", `action=cancel content=null`, nil},
		{"ask_form", "decline", `action=decline content=null`, []string{"Decline (Owner email is required and has no default; this editor cannot fill in forms)"}},
	} {
		seen, result := elicitRun(t, tt.tool, "elicit-permission", "ACP_OPTION="+tt.option)
		if result != tt.want {
			t.Errorf("%s %s: the server answered %q, want %q", tt.tool, tt.option, result, tt.want)
		}
		perms := seen["permissions"].([]any)
		if len(perms) != 1 {
			t.Fatalf("%d permission requests", len(perms))
		}
		p := perms[0].(map[string]any)
		if title := p["toolCall"].(map[string]any)["title"]; title != "MCP server ts asks: "+map[string]string{"ask_name": "What is your name?", "ask_form": "Set up the project"}[tt.tool] {
			t.Errorf("title %v", title)
		}
		if tt.names != nil {
			if got, _ := json.Marshal(p["names"]); string(got) != mustJSON(tt.names) {
				t.Errorf("options %s, want %s", got, mustJSON(tt.names))
			}
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
