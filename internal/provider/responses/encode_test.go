package responses

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/provider"
)

func decodeFixture(t *testing.T, name string) provider.Response {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := readStream(bytes.NewReader(data), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func str(s string) *string { return &s }

// The request after replies with reasoning, function calls and native
// calls sends every item back, in the order the model produced them:
// reasoning and native calls byte for byte, results as the output item of
// their call's type.
func TestNextRequestInputItemByItem(t *testing.T) {
	r1 := decodeFixture(t, "reasoning_function_call.sse")
	r2 := decodeFixture(t, "apply_patch.sse")
	r3 := decodeFixture(t, "shell.sse")
	msgs := []provider.Message{
		{Role: provider.RoleSystem, Content: str("You are tiny-go.")},
		{Role: provider.RoleUser, Content: str("fix main.go")},
		{Role: provider.RoleAssistant, ToolCalls: r1.ToolCalls, ReasoningDetails: r1.ReasoningDetails},
		{Role: provider.RoleTool, ToolCallID: "call_A1", Content: str("module x")},
		{Role: provider.RoleAssistant, ToolCalls: r2.ToolCalls, ReasoningDetails: r2.ReasoningDetails},
		{Role: provider.RoleTool, ToolCallID: "call_P1", Content: str("Successfully wrote 12 bytes to hello.txt.")},
		{Role: provider.RoleTool, ToolCallID: "call_P2", Content: str("oldText not found in main.go")},
		{Role: provider.RoleTool, ToolCallID: "call_P3", Content: str("(no output)")},
		{Role: provider.RoleAssistant, ToolCalls: r3.ToolCalls, ReasoningDetails: r3.ReasoningDetails},
		{Role: provider.RoleTool, ToolCallID: "call_S1", Content: str("a\nb\n\nCommand exited with code 2")},
		{Role: provider.RoleTool, ToolCallID: "call_L1", Content: str("hi\n")},
		{Role: provider.RoleAssistant, Content: str("Done.")},
		{Role: provider.RoleUser, Content: str("thanks")},
	}
	tools := []provider.ToolDefinition{{Name: "read"}, {Name: "write"}, {Name: "edit"}, {Name: "bash"}}
	body, err := encodeRequest(provider.Request{Model: "gpt-5.1", Messages: msgs, Tools: tools}, (&wire{}).options("gpt-5.1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var req struct {
		Instructions   string           `json:"instructions"`
		Store          *bool            `json:"store"`
		Include        []string         `json:"include"`
		PromptCacheKey string           `json:"prompt_cache_key"`
		Tools          []Tool           `json:"tools"`
		Input          []jsontext.Value `json:"input"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	if req.Instructions != "You are tiny-go." || req.Store == nil || *req.Store || strings.Join(req.Include, ",") != "reasoning.encrypted_content" || req.PromptCacheKey == "" {
		t.Errorf("request parameters: %s", body[:300])
	}
	var toolTypes []string
	for _, tl := range req.Tools {
		toolTypes = append(toolTypes, tl.Type+":"+tl.Name)
	}
	if got := strings.Join(toolTypes, ","); got != "function:read,apply_patch:,shell:" {
		t.Errorf("tools: %s", got)
	}
	fixtureItem := func(name string, index int) string {
		data, _ := os.ReadFile(filepath.Join("testdata", name))
		for _, line := range strings.Split(string(data), "\n") {
			if strings.Contains(line, `"response.output_item.done"`) && strings.Contains(line, `"output_index":`+string(rune('0'+index))+`,`) {
				raw := strings.TrimPrefix(line, "data: ")
				var ev struct {
					Item jsontext.Value `json:"item"`
				}
				if err := json.Unmarshal([]byte(raw), &ev); err != nil {
					t.Fatal(err)
				}
				return string(ev.Item)
			}
		}
		t.Fatalf("no item %d in %s", index, name)
		return ""
	}
	want := []string{
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"fix main.go"}]}`,
		fixtureItem("reasoning_function_call.sse", 0),
		`{"type":"function_call","call_id":"call_A1","name":"read","arguments":"{\"path\":\"go.mod\"}"}`,
		`{"type":"function_call_output","call_id":"call_A1","output":"module x"}`,
		fixtureItem("apply_patch.sse", 0),
		fixtureItem("apply_patch.sse", 1),
		fixtureItem("apply_patch.sse", 2),
		`{"type":"apply_patch_call_output","call_id":"call_P1","status":"completed","output":"Successfully wrote 12 bytes to hello.txt."}`,
		`{"type":"apply_patch_call_output","call_id":"call_P2","status":"failed","output":"oldText not found in main.go"}`,
		`{"type":"apply_patch_call_output","call_id":"call_P3","status":"completed","output":"(no output)"}`,
		fixtureItem("shell.sse", 0),
		fixtureItem("shell.sse", 1),
		`{"type":"shell_call_output","call_id":"call_S1","output":[{"stdout":"a\nb","stderr":"","outcome":{"type":"exit","exit_code":2}}]}`,
		`{"type":"local_shell_call_output","id":"call_L1","output":"hi\n"}`,
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Done."}]}`,
		`{"type":"message","role":"user","content":[{"type":"input_text","text":"thanks"}]}`,
	}
	if len(req.Input) != len(want) {
		t.Fatalf("%d input items, want %d:\n%s", len(req.Input), len(want), body)
	}
	for i := range want {
		if string(req.Input[i]) != want[i] {
			t.Errorf("input[%d]:\n got %s\nwant %s", i, req.Input[i], want[i])
		}
	}
	if !bytes.Contains(body, []byte(`"encrypted_content":"gAAAAABo_enc+/=\u003cx\u003e"`)) {
		t.Error("the encrypted reasoning was not sent back byte for byte")
	}
}

// Without kept items (another adapter's history, or native tools off) a
// call is a function_call of its tiny-go tool and its result a
// function_call_output.
func TestCallsWithoutKeptItemsAreFunctionCalls(t *testing.T) {
	msgs := []provider.Message{
		{Role: provider.RoleUser, Content: str("go")},
		{Role: provider.RoleAssistant, Content: str("Running."), ToolCalls: []provider.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"ls"}`}}},
		{Role: provider.RoleTool, ToolCallID: "c1", Content: str("x")},
	}
	body, err := encodeRequest(provider.Request{Model: "gpt-4.1", Messages: msgs, Tools: []provider.ToolDefinition{{Name: "bash"}}}, (&wire{}).options("gpt-4.1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Running."}]},{"type":"function_call","call_id":"c1","name":"bash","arguments":"{\"command\":\"ls\"}"},{"type":"function_call_output","call_id":"c1","output":"x"}`,
		`"tools":[{"type":"function","name":"bash","parameters":{"type":"object","properties":{}},"strict":false}]`,
	} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("body lacks %s:\n%s", want, body)
		}
	}
	if bytes.Contains(body, []byte(`"reasoning":`)) {
		t.Errorf("a model that does not reason got the reasoning parameter: %s", body)
	}
}

// --reasoning off asks each model family for its least effort; models that
// do not reason get no reasoning parameter.
func TestReasoningEffort(t *testing.T) {
	for _, c := range []struct{ model, effort, want string }{
		{"gpt-5.1-codex", provider.ReasoningOff, `"reasoning":{"effort":"none","summary":"auto"}`},
		{"gpt-5-mini", provider.ReasoningOff, `"reasoning":{"effort":"minimal","summary":"auto"}`},
		{"o4-mini", provider.ReasoningOff, `"reasoning":{"effort":"low","summary":"auto"}`},
		{"gpt-5.1", provider.ReasoningHigh, `"reasoning":{"effort":"high","summary":"auto"}`},
		{"openai/gpt-5.1", "", `"reasoning":{"summary":"auto"}`},
	} {
		body, err := encodeRequest(provider.Request{Model: c.model, Messages: []provider.Message{{Role: provider.RoleUser, Content: str("x")}}},
			(&wire{effort: c.effort}).options(c.model), nil)
		if err != nil || !bytes.Contains(body, []byte(c.want)) || bytes.Contains(body, []byte(`"max_output_tokens"`)) {
			t.Errorf("%s %s: %v\n%s", c.model, c.effort, err, body)
		}
	}
}

// bash's result is read back into a shell outcome.
func TestShellOutput(t *testing.T) {
	for _, c := range []struct {
		content, stdout, outcome string
		code                     int
	}{
		{"a\nb\n\nCommand exited with code 2", "a\nb", "exit", 2},
		{"out\n\nCommand timed out after 1.5 seconds.", "out", "timeout", 0},
		{"all fine\n", "all fine\n", "exit", 0},
		{"Error: Tool arguments were invalid; the tool was not executed.", "Error: Tool arguments were invalid; the tool was not executed.", "exit", 1},
		{"echoed Command exited with code 3 in the middle\nmore", "echoed Command exited with code 3 in the middle\nmore", "exit", 0},
	} {
		o := shellOutput(c.content)
		code := 0
		if o.Outcome.ExitCode != nil {
			code = *o.Outcome.ExitCode
		}
		if o.Stdout != c.stdout || o.Outcome.Type != c.outcome || code != c.code {
			t.Errorf("%q: %+v code %d", c.content, o, code)
		}
	}
}

// The item cache never changes a body: a growing conversation, a changed
// message and a compaction give the bytes of an uncached encoding.
func TestItemCacheKeepsBodiesExact(t *testing.T) {
	r2 := decodeFixture(t, "apply_patch.sse")
	msgs := []provider.Message{
		{Role: provider.RoleSystem, Content: str("sys")},
		{Role: provider.RoleUser, Content: str("go")},
		{Role: provider.RoleAssistant, ToolCalls: r2.ToolCalls, ReasoningDetails: r2.ReasoningDetails},
		{Role: provider.RoleTool, ToolCallID: "call_P1", Content: str("Successfully wrote 1 bytes to a.")},
		{Role: provider.RoleTool, ToolCallID: "call_P2", Content: str("failed")},
		{Role: provider.RoleTool, ToolCallID: "call_P3", Content: str("")},
		{Role: provider.RoleAssistant, Content: str("done")},
		{Role: provider.RoleUser, Content: str("more")},
	}
	var w wire
	check := func(what string, ms []provider.Message) {
		t.Helper()
		req := provider.Request{Model: "gpt-5.1", Messages: ms}
		got, err := w.Encode(req)
		want, err2 := encodeRequest(req, w.options(req.Model), nil)
		if err != nil || err2 != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: cached body differs:\n got %s\nwant %s", what, got, want)
		}
	}
	for n := 2; n <= len(msgs); n++ {
		check(fmt.Sprintf("%d messages", n), msgs[:n])
	}
	// The call's kept items are lost (another model): its results become
	// function_call_output although their messages did not change.
	changed := slices.Clone(msgs)
	changed[2].ReasoningDetails = nil
	check("kept items gone", changed)
	changed[3].Content = str("Successfully wrote 2 bytes to a.")
	check("a changed result", changed)
	check("compacted", []provider.Message{msgs[0], {Role: provider.RoleUser, Content: str("[Compacted history]\n...")}, msgs[7]})
}
