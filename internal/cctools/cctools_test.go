package cctools

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/mcp"
)

func TestToClaude(t *testing.T) {
	cases := []struct {
		tool, args, name, input string
	}{
		{"bash", `{"command":"ls -la","timeout":2.5}`, Bash, `{"command":"ls -la","timeout":2500}`},
		{"bash", `{"command":"ls"}`, Bash, `{"command":"ls"}`},
		{"bash", `{"command":"ls","description":"List files"}`, Bash, `{"command":"ls","description":"List files"}`},
		{"bg", `{"action":"start","command":"make","description":"Build"}`, Bash, `{"command":"make","description":"Build","run_in_background":true}`},
		{"read", `{"path":"a/b.go","offset":3}`, Read, `{"file_path":"/w/a/b.go","offset":3}`},
		{"read", `{"path":"/etc/hosts"}`, Read, `{"file_path":"/etc/hosts"}`},
		{"write", `{"path":"x.txt","content":"hi"}`, Write, `{"content":"hi","file_path":"/w/x.txt"}`},
		{"edit", `{"path":"x","edits":[{"oldText":"a","newText":"b"}]}`, Edit,
			`{"file_path":"/w/x","new_string":"b","old_string":"a","replace_all":false}`},
		{"edit", `{"path":"x","edits":[{"oldText":"a","newText":"b"},{"oldText":"c","newText":"d"}]}`, MultiEdit,
			`{"edits":[{"new_string":"b","old_string":"a"},{"new_string":"d","old_string":"c"}],"file_path":"/w/x"}`},
		{"bg", `{"action":"start","command":"npm run dev"}`, Bash, `{"command":"npm run dev","run_in_background":true}`},
		{"bg", `{"action":"logs","id":"b1"}`, BashOutput, `{"bash_id":"b1"}`},
		{"bg", `{"action":"stop","id":"b1"}`, KillShell, `{"shell_id":"b1"}`},
		{"bg", `{"action":"list"}`, "bg", `{"action":"list"}`},
		{"task", `{"description":"d","prompt":"p","subagent_type":"explore"}`, Agent,
			`{"description":"d","prompt":"p","subagent_type":"explore"}`},
		{"todo_write", `{"todos":[]}`, TodoWrite, `{"todos":[]}`},
		{"diagnostics", `{}`, "diagnostics", `{}`},
		{"web_fetch", `{"prompt":"what changed?","url":"https://go.dev/doc"}`, WebFetch, `{"prompt":"what changed?","url":"https://go.dev/doc"}`},
		{"web_search", `{"query":"go 1.25","allowed_domains":["go.dev"]}`, WebSearch, `{"query":"go 1.25","allowed_domains":["go.dev"]}`},
		{"bash", `not json`, Bash, `not json`},
	}
	for _, c := range cases {
		got := ToClaude(c.tool, jsontext.Value(c.args), "/w")
		if got.Name != c.name || string(got.Input) != c.input {
			t.Errorf("ToClaude(%s, %s) = %s %s; want %s %s", c.tool, c.args, got.Name, got.Input, c.name, c.input)
		}
	}
}

// An MCP tool has the same name in both vocabularies: tiny-go names it as
// Claude Code does (mcp.ToolName).
func TestMCPNames(t *testing.T) {
	for _, pair := range [][2]string{{"github", "create_issue"}, {"fs", "read-file"}, {"?>", "~~"}} {
		tiny, err := mcp.ToolName(pair[0], pair[1])
		if err != nil {
			t.Fatal(err)
		}
		if got := ClaudeName(tiny); got != tiny {
			t.Errorf("ClaudeName(%s) = %s", tiny, got)
		}
		if got := TinyName(tiny); got != tiny {
			t.Errorf("TinyName(%s) = %s", tiny, got)
		}
		if names := Names(tiny, jsontext.Value(`{}`)); !slices.Equal(names, []string{tiny}) {
			t.Errorf("Names(%s) = %v", tiny, names)
		}
	}
	if got := ClaudeName("mcp__github__create_issue"); got != "mcp__github__create_issue" {
		t.Errorf("ClaudeName changed a plain MCP name: %s", got)
	}
}

func TestFromClaudeRoundTrips(t *testing.T) {
	cases := []struct{ tool, args string }{
		{"bash", `{"command":"ls","timeout":3}`},
		{"bash", `{"command":"ls","description":"List"}`},
		{"bg", `{"action":"start","command":"make","description":"Build"}`},
		{"read", `{"limit":5,"offset":2,"path":"/w/a"}`},
		{"write", `{"content":"x","path":"/w/a"}`},
		{"edit", `{"edits":[{"newText":"b","oldText":"a"}],"path":"/w/a"}`},
		{"edit", `{"edits":[{"newText":"b","oldText":"a"},{"newText":"d","oldText":"c"}],"path":"/w/a"}`},
		{"bg", `{"action":"start","command":"sleep 9"}`},
		{"bg", `{"action":"stop","id":"b2"}`},
		{"web_fetch", `{"prompt":"p","url":"https://go.dev/"}`},
	}
	for _, c := range cases {
		call := ToClaude(c.tool, jsontext.Value(c.args), "/w")
		tool, back, err := TinyCall(call)
		if err != nil || tool != c.tool {
			t.Fatalf("TinyCall(%s, %s) = %s, %v; want %s", call.Name, call.Input, tool, err, c.tool)
		}
		if string(back) != c.args {
			t.Errorf("%s: %s -> %s -> %s", c.tool, c.args, call.Input, back)
		}
	}
}

func TestFromClaudeAcceptsTinyShapeAndRefusesReplaceAll(t *testing.T) {
	own := `{"command":"true"}`
	if got, err := FromClaude("bash", jsontext.Value(own)); err != nil || string(got) != own {
		t.Errorf("tiny-go's own shape: %s %v", got, err)
	}
	_, err := FromClaude("edit", jsontext.Value(`{"file_path":"a","old_string":"x","new_string":"y","replace_all":true}`))
	if !errors.Is(err, ErrUnsupported) {
		t.Errorf("replace_all: %v; want ErrUnsupported", err)
	}
	if _, err := FromClaude("bash", jsontext.Value(`[1]`)); err == nil {
		t.Error("a non-object input was accepted")
	}
}

func TestResponse(t *testing.T) {
	got := string(Response("bash", jsontext.Value(`{"command":"echo hi"}`), "/w", "hi\n", false))
	if got != `{"interrupted":false,"isImage":false,"noOutputExpected":false,"stderr":"","stdout":"hi"}` {
		t.Errorf("bash response: %s", got)
	}
	got = string(Response("bash", jsontext.Value(`{"command":"true"}`), "/w", "(no output)", false))
	if !strings.Contains(got, `"stdout":""`) {
		t.Errorf("bash response without output: %s", got)
	}
	for content, want := range map[string]string{
		"(no output)\n\nCommand exited with code 1": "Exit code 1",
		"oops\n\n\nCommand exited with code 2":      "Exit code 2\noops",
		"Cannot run sh: no":                         "Cannot run sh: no",
	} {
		if got := FailureError("bash", content); got != want {
			t.Errorf("FailureError(%q) = %q; want %q", content, got, want)
		}
	}
	got = string(Response("write", jsontext.Value(`{"path":"a","content":"x"}`), "/w", "Wrote 1 bytes", false))
	if got != `{"content":"Wrote 1 bytes","filePath":"/w/a","success":true}` {
		t.Errorf("write response: %s", got)
	}
}

// The subagent tool answers to Task and to Agent, Claude Code 2.1's name.
func TestTaskNames(t *testing.T) {
	if got := Names("task", jsontext.Value(`{"prompt":"p"}`)); !slices.Equal(got, []string{"task", "Task", "Agent"}) {
		t.Errorf("Names(task) = %v", got)
	}
}

// WebSearch is web_search both ways, with Claude Code's input as it is.
func TestWebSearch(t *testing.T) {
	in := jsontext.Value(`{"query":"q","blocked_domains":["x.com"]}`)
	tool, args, err := TinyCall(Call{Name: WebSearch, Input: in})
	if err != nil || tool != "web_search" || string(args) != string(in) {
		t.Fatalf("TinyCall = %s %s %v", tool, args, err)
	}
	if names := Names("web_search", in); !slices.Equal(names, []string{"web_search", WebSearch}) {
		t.Fatalf("Names = %v", names)
	}
	if r := Response("web_search", in, "/w", "results", false); string(r) != `{"content":"results","is_error":false}` {
		t.Fatalf("Response = %s", r)
	}
}
