package headless_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/mcp"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// These tests run the real tiny-go binary under the official Claude Agent
// SDK for Python (claude-agent-sdk, tag v0.2.143 of
// anthropics/claude-agent-sdk-python), through testdata/client.py. The
// SDK and its dependencies (anyio >= 4, mcp, httpx, ...) are on no
// registry this project reaches, so they run only where TINY_PY_SDK is a
// PYTHONPATH under which `import claude_agent_sdk` works (docs/headless.md).

// pyClient runs testdata/client.py SCENARIO with tiny-go in dir and
// returns what the SDK program saw.
func pyClient(t *testing.T, srv *providertest.Server, dir, scenario string, extra ...string) map[string]any {
	t.Helper()
	path := os.Getenv("TINY_PY_SDK")
	if path == "" {
		t.Skip("TINY_PY_SDK is not set: the Python Agent SDK is not installable here (docs/headless.md)")
	}
	python := os.Getenv("TINY_PY_SDK_PYTHON")
	if python == "" {
		python = "python3"
	}
	env := append(append(env(srv.URL()), "MARKS="+marksOf(t, dir)), extra...)
	env = append(env, "HL_AGENT="+selfLink(t), "HL_CWD="+dir, "PYTHONPATH="+path, "CLAUDE_AGENT_SDK_SKIP_VERSION_CHECK=1")
	testdata, _ := filepath.Abs("testdata")
	cmd := exec.Command(python, filepath.Join(testdata, "client.py"), scenario)
	cmd.Dir, cmd.Env = testdata, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("client: %v\nstderr:\n%s", err, stderr.String())
	}
	var seen map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &seen); err != nil {
		t.Fatalf("client output %q: %v\nstderr:\n%s", stdout.String(), err, stderr.String())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("client saw: %s\nstderr:\n%s", stdout.String(), stderr.String())
		}
	})
	return seen
}

// pyMessages are the messages of a class (ResultMessage, AssistantMessage,
// ...), in order.
func pyMessages(seen map[string]any, class string) []map[string]any {
	var out []map[string]any
	for _, m := range seen["messages"].([]any) {
		if mm := m.(map[string]any); mm["_class"] == class {
			out = append(out, mm)
		}
	}
	return out
}

// 100 query("hello") in a row, each a new tiny-go whose stdin the SDK
// closes right after the prompt: every one answers.
func TestPySDKHelloAlwaysAnswers(t *testing.T) {
	const n = 100
	dir := t.TempDir()
	var replies []providertest.Reply
	for range n {
		replies = append(replies, providertest.Reply{Text: "hello back", ChunkSize: 3})
	}
	srv := providertest.New(t, replies...)
	seen := pyClient(t, srv, dir, "hello", "HL_COUNT=100")
	if thrown, _ := seen["thrown"].(string); thrown != "" {
		t.Fatalf("the SDK raised %s", thrown)
	}
	results := pyMessages(seen, "ResultMessage")
	ok := 0
	for _, r := range results {
		if r["subtype"] == "success" && r["result"] == "hello back" {
			ok++
		}
	}
	if ok != n {
		t.Fatalf("%d of %d runs answered (%d results)", ok, n, len(results))
	}
}

// A PreToolUse hook callback (matcher "Bash") that denies: tiny-go asks
// the SDK (hook_callback) before the call, the command never runs even
// under bypassPermissions, and the model gets the hook's reason; under
// both SDKs.
func TestPySDKHookDeniesBash(t *testing.T) {
	checkHookDenies(t, func(srv *providertest.Server, dir string) map[string]any { return pyClient(t, srv, dir, "hook") }, "ResultMessage")
}

func TestSDKHookDeniesBash(t *testing.T) {
	checkHookDenies(t, func(srv *providertest.Server, dir string) map[string]any { return sdkClient(t, srv, dir, "hook") }, "result")
}

func checkHookDenies(t *testing.T, client func(*providertest.Server, string) map[string]any, result string) {
	dir := t.TempDir()
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: "call-1", Name: "bash", Arguments: `{"command":"touch made.txt"}`}}},
		providertest.Reply{Text: "denied, ok"},
	)
	seen := client(srv, dir)
	if thrown, _ := seen["thrown"].(string); thrown != "" {
		t.Fatalf("the SDK raised %s", thrown)
	}
	calls, _ := seen["calls"].([]any)
	if len(calls) != 1 {
		t.Fatalf("the hook callback ran %d times, want 1: %v", len(calls), calls)
	}
	c := calls[0].(map[string]any)
	if c["hook"] != "PreToolUse" || c["tool"] != "Bash" || c["input"].(map[string]any)["command"] != "touch made.txt" {
		t.Errorf("the hook got %v", c)
	}
	if _, err := os.Stat(filepath.Join(dir, "made.txt")); err == nil {
		t.Error("the denied command ran")
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	msgs := reqs[1].Chat.Messages
	if last := msgs[len(msgs)-1]; last.Role != "tool" || last.Content == nil || !strings.Contains(*last.Content, "no shell today") {
		t.Errorf("the model got %+v; want the hook's reason", last)
	}
	if r := resultsOf(seen, result); len(r) != 1 || r[0]["subtype"] != "success" {
		t.Errorf("results %v", r)
	}
}

// resultsOf are the result messages, by the Python class name or the
// TypeScript type.
func resultsOf(seen map[string]any, kind string) []map[string]any {
	if kind == "result" {
		return messages(seen, "result", "")
	}
	return pyMessages(seen, kind)
}

// An SDK MCP tool (create_sdk_mcp_server, passed in --mcp-config with
// type "sdk"): tiny-go connects it over the control protocol
// (mcp_message), offers its tool, the model's call runs in the SDK's
// process and its result reaches the model.
func TestPySDKMCPTool(t *testing.T) {
	checkSDKMCPTool(t, func(srv *providertest.Server, dir string) map[string]any { return pyClient(t, srv, dir, "mcp") }, "ResultMessage")
}

func checkSDKMCPTool(t *testing.T, client func(*providertest.Server, string) map[string]any, result string) {
	dir := t.TempDir()
	name, err := mcp.ToolName("calc", "add")
	if err != nil {
		t.Fatal(err)
	}
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: "call-add", Name: name, Arguments: `{"a":2,"b":3}`}}},
		providertest.Reply{Text: "it is 5"},
	)
	seen := client(srv, dir)
	if thrown, _ := seen["thrown"].(string); thrown != "" {
		t.Fatalf("the SDK raised %s", thrown)
	}
	calls, _ := seen["calls"].([]any)
	if len(calls) != 1 {
		t.Fatalf("the SDK's tool ran %d times, want 1: %v", len(calls), calls)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	offered := false
	for _, tool := range reqs[0].Chat.Tools {
		offered = offered || tool.Function.Name == name
	}
	if !offered {
		t.Errorf("the first request does not offer %s", name)
	}
	msgs := reqs[1].Chat.Messages
	if last := msgs[len(msgs)-1]; last.Role != "tool" || last.Content == nil || !strings.Contains(*last.Content, "sum=5") {
		t.Errorf("the model got %+v; want the tool's result", last)
	}
	if r := resultsOf(seen, result); len(r) != 1 || r[0]["subtype"] != "success" || r[0]["result"] != "it is 5" {
		t.Errorf("results %v", r)
	}
}

func TestSDKMCPTool(t *testing.T) {
	var seen map[string]any
	checkSDKMCPTool(t, func(srv *providertest.Server, dir string) map[string]any {
		seen = sdkClient(t, srv, dir, "mcp")
		return seen
	}, "result")
	// mcp_status names the SDK's server, connected, with its tool.
	st, _ := seen["mcpStatus"].([]any)
	if len(st) != 1 {
		t.Fatalf("mcpServerStatus() = %v; want the calc server", seen["mcpStatus"])
	}
	s := st[0].(map[string]any)
	if s["name"] != "calc" || s["status"] != "connected" || s["source"] != "sdk" || len(s["tools"].([]any)) != 1 || s["tools"].([]any)[0].(map[string]any)["name"] != "add" {
		t.Errorf("mcpServerStatus() = %v", s)
	}
}

// max_budget_usd: with replies of $0.01 each and a budget of $0.015, the
// second reply goes past it and is the last: error_max_budget_usd, two
// model requests, the cost of both.
func TestPySDKMaxBudget(t *testing.T) {
	checkBudget(t, func(srv *providertest.Server, dir string) map[string]any {
		return pyClient(t, srv, dir, "budget", "HL_BUDGET=0.015")
	}, "ResultMessage")
}

func TestSDKMaxBudget(t *testing.T) {
	checkBudget(t, func(srv *providertest.Server, dir string) map[string]any {
		return sdkClient(t, srv, dir, "budget", "HL_BUDGET=0.015")
	}, "result")
}

func checkBudget(t *testing.T, client func(*providertest.Server, string) map[string]any, result string) {
	dir := t.TempDir()
	cent := 0.01
	var replies []providertest.Reply
	for i := range 4 {
		replies = append(replies, providertest.Reply{
			ToolCalls: []providertest.ToolCall{{ID: "call-" + strconv.Itoa(i), Name: "bash", Arguments: `{"command":"echo step"}`}},
			Usage:     &providertest.Usage{PromptTokens: 10, CompletionTokens: 5, Cost: &cent},
		})
	}
	srv := providertest.New(t, replies...)
	seen := client(srv, dir)
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d model requests, want 2 (the second goes past the budget)", n)
	}
	rs := resultsOf(seen, result)
	if len(rs) != 1 {
		t.Fatalf("%d results: %v", len(rs), rs)
	}
	r := rs[0]
	if r["subtype"] != "error_max_budget_usd" || r["is_error"] != true || r["num_turns"] != 2.0 {
		t.Errorf("result %v; want error_max_budget_usd after 2 turns", r)
	}
	if c, _ := r["total_cost_usd"].(float64); c < 0.0199 || c > 0.0201 {
		t.Errorf("total_cost_usd %v, want 0.02", r["total_cost_usd"])
	}
	// The failed last turn is exit 1, which the SDK raises with the
	// result's error, as it does with Claude Code.
	if thrown, _ := seen["thrown"].(string); !strings.Contains(thrown, "maximum budget") {
		t.Errorf("the SDK raised %q; want the budget error", thrown)
	}
}

// fork_session: resuming a session as a fork runs in a new session (a new
// id in every message) holding the original's conversation, and leaves
// the original file as it was.
func TestPySDKForkSession(t *testing.T) {
	checkFork(t, func(srv *providertest.Server, dir string, extra ...string) map[string]any {
		return pyClient(t, srv, dir, "fork", extra...)
	}, "ResultMessage")
}

func TestSDKForkSession(t *testing.T) {
	checkFork(t, func(srv *providertest.Server, dir string, extra ...string) map[string]any {
		return sdkClient(t, srv, dir, "fork", extra...)
	}, "result")
}

func checkFork(t *testing.T, client func(*providertest.Server, string, ...string) map[string]any, result string) {
	dir := t.TempDir()
	srv := providertest.New(t, providertest.Reply{Text: "first answer"}, providertest.Reply{Text: "second answer"})
	first := start(t, srv, dir, "-p", "--output-format=json", "first question")
	first.rest()
	if code := first.exit(); code != 0 {
		t.Fatalf("the first run exited %d", code)
	}
	id, _ := readSession(t, dir)
	files, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "sessions", "*.jsonl"))
	before, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	seen := client(srv, dir, "HL_SESSION="+id)
	rs := resultsOf(seen, result)
	if len(rs) != 1 || rs[0]["subtype"] != "success" || rs[0]["result"] != "second answer" {
		t.Fatalf("results %v", rs)
	}
	forkID, _ := rs[0]["session_id"].(string)
	if forkID == "" || forkID == id {
		t.Fatalf("the fork's session id is %q; want a new one (the original is %s)", forkID, id)
	}
	after, _ := os.ReadFile(files[0])
	if !bytes.Equal(before, after) {
		t.Error("the original session file changed")
	}
	msgs := srv.Requests()[1].Chat.Messages
	var texts []string
	for _, m := range msgs {
		if m.Content != nil {
			texts = append(texts, *m.Content)
		}
	}
	if all := strings.Join(texts, "\n"); !strings.Contains(all, "first answer") || !strings.Contains(all, "second question") {
		t.Errorf("the fork's model request lacks the original conversation: %q", texts)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "sessions", "*"+forkID+".jsonl")); len(files) != 1 {
		t.Errorf("no session file of the fork %s", forkID)
	}
}

// Resuming a session that does not exist is an error result and exit 1,
// so the SDK raises that error, not a bare process failure.
func TestPySDKResumeUnknown(t *testing.T) {
	checkResumeUnknown(t, func(srv *providertest.Server, dir string, extra ...string) map[string]any {
		return pyClient(t, srv, dir, "resume_unknown", extra...)
	})
}

func TestSDKResumeUnknown(t *testing.T) {
	checkResumeUnknown(t, func(srv *providertest.Server, dir string, extra ...string) map[string]any {
		return sdkClient(t, srv, dir, "resumeUnknown", extra...)
	})
}

func checkResumeUnknown(t *testing.T, client func(*providertest.Server, string, ...string) map[string]any) {
	dir := t.TempDir()
	srv := providertest.New(t)
	const id = "01a24b90-0000-7000-8000-000000000000"
	seen := client(srv, dir, "HL_SESSION="+id)
	if thrown, _ := seen["thrown"].(string); !strings.Contains(thrown, "No conversation found with session ID: "+id) {
		t.Errorf("the SDK raised %q; want the unknown session named", thrown)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d model requests", n)
	}
}

// Options tiny-go cannot honour (structured output, a chosen session id)
// are refused with an error the SDK raises, not a stderr line alone, and
// nothing runs.
func TestPySDKRefusedOptions(t *testing.T) {
	checkRefused(t, func(t *testing.T, srv *providertest.Server, dir string, extra ...string) map[string]any {
		return pyClient(t, srv, dir, "refused", extra...)
	})
}

func TestSDKRefusedOptions(t *testing.T) {
	checkRefused(t, func(t *testing.T, srv *providertest.Server, dir string, extra ...string) map[string]any {
		return sdkClient(t, srv, dir, "refused", extra...)
	})
}

// client gets the subtest's t, so a missing SDK skips the subtest.
func checkRefused(t *testing.T, client func(*testing.T, *providertest.Server, string, ...string) map[string]any) {
	for opt, want := range map[string]string{"schema": "structured output", "session": "session ids"} {
		t.Run(opt, func(t *testing.T) {
			srv := providertest.New(t)
			seen := client(t, srv, t.TempDir(), "HL_OPT="+opt)
			if thrown, _ := seen["thrown"].(string); !strings.Contains(thrown, want) {
				t.Errorf("the SDK raised %q; want an error about %s", thrown, want)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d model requests", n)
			}
		})
	}
}
