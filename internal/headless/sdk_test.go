package headless_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/cli"
	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/testenv"
)

// These tests run the real tiny-go binary (this test binary, re-executed
// as tiny-go) under a program we did not write: one built on the official
// Claude Agent SDK from npm (testdata/package.json pins it; install with
// `npm ci --prefix internal/headless/testdata --omit=optional`), which
// starts tiny-go through pathToClaudeCodeExecutable, against the scripted
// model server.

const childEnv = "TINY_GO_HEADLESS_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(cli.Program())
	}
	os.Exit(m.Run())
}

// env is the environment of a tiny-go child using srv.
func env(srvURL string) []string {
	return append(os.Environ(), childEnv+"=1",
		"OPENROUTER_API_KEY=test-key",
		"TINY_ENDPOINT="+srvURL,
		"TINY_AGENT_ENVIRONMENT_IDENTITY=headless-test",
		"OTEL_SDK_DISABLED=true",
	)
}

// selfLink is tiny-go for the SDK: a path not ending in .js, which the SDK
// executes directly.
func selfLink(t *testing.T) string { return selfLinkTB(t) }

func selfLinkTB(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "tiny-go")
	if err := os.Symlink(exe, link); err != nil {
		t.Fatal(err)
	}
	return link
}

// sdkClient runs testdata/client.mjs SCENARIO with tiny-go in dir and
// returns what the SDK program saw.
func sdkClient(t *testing.T, srv *providertest.Server, dir, scenario string, extra ...string) map[string]any {
	t.Helper()
	env := append(append(env(srv.URL()), "MARKS="+marksOf(t, dir)), extra...)
	env = append(env, "HL_AGENT="+selfLink(t), "HL_CWD="+dir)
	return testenv.NodeClient(t, "@anthropic-ai/claude-agent-sdk", " --omit=optional", scenario, env)
}

// messages of a type (and subtype, when given), in order.
func messages(seen map[string]any, typ, subtype string) []map[string]any {
	var out []map[string]any
	for _, m := range seen["messages"].([]any) {
		mm := m.(map[string]any)
		if mm["type"] == typ && (subtype == "" || mm["subtype"] == subtype) {
			out = append(out, mm)
		}
	}
	return out
}

// blocks of a type in the messages of a type.
func blocks(seen map[string]any, typ, blockType string) []map[string]any {
	var out []map[string]any
	for _, m := range messages(seen, typ, "") {
		for _, b := range m["message"].(map[string]any)["content"].([]any) {
			if bb := b.(map[string]any); bb["type"] == blockType {
				out = append(out, bb)
			}
		}
	}
	return out
}

func onlyResult(t *testing.T, seen map[string]any) map[string]any {
	t.Helper()
	rs := messages(seen, "result", "")
	if len(rs) != 1 {
		t.Fatalf("%d result messages, want 1", len(rs))
	}
	return rs[0]
}

// readSession reduces the only session file of dir.
func readSession(t *testing.T, dir string) (string, *session.State) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, ".tiny-agent", "sessions", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("%d session files in %s", len(files), dir)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	st, corrupt := session.Reduce(b)
	if corrupt != nil {
		t.Fatalf("the session does not reduce: %v", corrupt)
	}
	name := strings.TrimSuffix(filepath.Base(files[0]), ".jsonl")
	return name[strings.LastIndexByte(name, '_')+1:], st
}

func TestSDKStreamedQuery(t *testing.T) {
	dir := t.TempDir()
	srv := providertest.New(t, providertest.Reply{Reasoning: "Let me think.", Text: "Hello from tiny-go.", ChunkSize: 4,
		Usage: &providertest.Usage{PromptTokens: 100, CompletionTokens: 7}})
	seen := sdkClient(t, srv, dir, "stream", "HL_SYSTEM=You are tiny-go under test.")
	id, st := readSession(t, dir)
	if sys := srv.Requests()[0].Chat.Messages[0]; sys.Role != "system" || sys.Content == nil || *sys.Content != "You are tiny-go under test." {
		t.Errorf("the SDK's systemPrompt did not replace the system prompt: %+v", sys)
	}

	inits := messages(seen, "system", "init")
	if len(inits) != 1 {
		t.Fatalf("%d system/init messages", len(inits))
	}
	init := inits[0]
	if init["session_id"] != id || init["cwd"] != dir || init["model"] == "" || init["permissionMode"] != "default" {
		t.Fatalf("init = %v; want session %s in %s", init, id, dir)
	}
	tools := map[any]bool{}
	for _, n := range init["tools"].([]any) {
		tools[n] = true
	}
	for _, want := range []string{"Bash", "Read", "Write", "Edit", "BashOutput"} {
		if !tools[want] {
			t.Errorf("init tools %v lack %s", init["tools"], want)
		}
	}
	texts := blocks(seen, "assistant", "text")
	if len(texts) != 1 || texts[0]["text"] != "Hello from tiny-go." {
		t.Fatalf("assistant text blocks = %v", texts)
	}
	// Partial messages: the thinking block (index 0), then the text
	// block (index 1), each opened, streamed and closed.
	streamed := map[float64]string{}
	var kinds []string
	for _, e := range messages(seen, "stream_event", "") {
		ev := e["event"].(map[string]any)
		switch ev["type"] {
		case "content_block_start":
			kinds = append(kinds, ev["content_block"].(map[string]any)["type"].(string))
		case "content_block_delta":
			d := ev["delta"].(map[string]any)
			piece, _ := d["text"].(string)
			if th, ok := d["thinking"].(string); ok {
				piece = th
			}
			streamed[ev["index"].(float64)] += piece
		}
	}
	if strings.Join(kinds, ",") != "thinking,text" || streamed[0] != "Let me think." || streamed[1] != "Hello from tiny-go." {
		t.Errorf("partial messages: blocks %v, streamed %v", kinds, streamed)
	}
	r := onlyResult(t, seen)
	if r["subtype"] != "success" || r["is_error"] != false || r["result"] != "Hello from tiny-go." || r["session_id"] != id || r["num_turns"] != 1.0 {
		t.Fatalf("result = %v", r)
	}
	if u := r["usage"].(map[string]any); u["input_tokens"] != 100.0 || u["output_tokens"] != 7.0 {
		t.Errorf("result usage = %v", u)
	}
	mu, _ := r["modelUsage"].(map[string]any)[init["model"].(string)].(map[string]any)
	if mu["inputTokens"] != 100.0 || mu["outputTokens"] != 7.0 || mu["contextWindow"] != 128000.0 {
		t.Errorf("result modelUsage = %v; want the model's tokens", r["modelUsage"])
	}
	if st.Operation != nil || st.LastFinished.Outcome != session.OutcomeCompleted {
		t.Errorf("session: operation %v, last %v", st.Operation, st.LastFinished)
	}
}

func TestSDKCanUseToolAllowAndDeny(t *testing.T) {
	dir := t.TempDir()
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: "call-1", Name: "bash", Arguments: `{"command":"echo original > allowed.txt"}`}}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: "call-2", Name: "bash", Arguments: `{"command":"touch denied.txt"}`}}},
		providertest.Reply{Text: "Done."},
	)
	seen := sdkClient(t, srv, dir, "permissions")

	perms := seen["permissions"].([]any)
	if len(perms) != 2 {
		t.Fatalf("canUseTool was called %d times, want 2", len(perms))
	}
	first := perms[0].(map[string]any)
	if first["toolName"] != "Bash" || first["input"].(map[string]any)["command"] != "echo original > allowed.txt" || first["toolUseID"] != "call-1" {
		t.Errorf("first permission request = %v", first)
	}
	// The allowed call ran with the SDK's updatedInput.
	if b, err := os.ReadFile(filepath.Join(dir, "allowed.txt")); err != nil || string(b) != "changed\n" {
		t.Errorf("allowed.txt = %q, %v; want the updated command's output", b, err)
	}
	// The denied call did not run, and the model was told why.
	if _, err := os.Stat(filepath.Join(dir, "denied.txt")); !os.IsNotExist(err) {
		t.Errorf("the denied command ran: %v", err)
	}
	reqs := srv.Requests()
	if last := string(reqs[len(reqs)-1].Body); !strings.Contains(last, "not this one, please") {
		t.Errorf("the model was not told the denial message: %s", last)
	}
	results := blocks(seen, "user", "tool_result")
	if len(results) != 2 || results[0]["is_error"] != false || results[1]["is_error"] != true {
		t.Errorf("tool results = %v", results)
	}
	r := onlyResult(t, seen)
	if r["subtype"] != "success" || r["result"] != "Done." || r["num_turns"] != 3.0 {
		t.Errorf("result = %v", r)
	}
	if d := r["permission_denials"].([]any); len(d) != 1 || d[0].(map[string]any)["tool_use_id"] != "call-2" {
		t.Errorf("permission_denials = %v", d)
	}
	// What ran is what the session says ran.
	_, st := readSession(t, dir)
	found := false
	for _, m := range st.Transcript {
		if m.Role == session.RoleTool && m.ToolCallID == "call-1" {
			found = true
		}
	}
	if !found {
		t.Error("the session has no result of the allowed call")
	}
}

// longCommand starts a sleep, says so in $MARKS/sleep.pid, and waits for
// it. The marker is outside the working directory: a command runs over an
// overlay of it, and its writes reach the tree only when it ends.
const longCommand = `{"command":"sleep 300 & echo $! > $MARKS/sleep.pid; wait"}`

// marksOf is the folder beside dir where the commands of a test in dir
// leave their markers ($MARKS).
func marksOf(t *testing.T, dir string) string {
	m := dir + "-marks"
	if err := os.MkdirAll(m, 0o755); err != nil {
		t.Fatal(err)
	}
	return m
}

// noneLeft waits until no process runs in dir (tiny-go, the shell, sleep)
// and fails the test if one is still there after a generous bound.
func noneLeft(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		left := processesIn(dir)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes left in %s: %v", dir, left)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// processesIn lists the live processes whose working directory is dir.
func processesIn(dir string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err != nil || cwd != dir {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:])); len(f) > 0 && f[0] == "Z" {
			continue // a zombie no one has reaped yet runs nothing
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out = append(out, e.Name()+" "+strings.ReplaceAll(string(cmd), "\x00", " "))
	}
	return out
}

func TestSDKInterruptDuringLongCommand(t *testing.T) {
	dir := t.TempDir()
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: "call-long", Name: "bash", Arguments: longCommand}}},
	)
	seen := sdkClient(t, srv, dir, "interrupt")
	noneLeft(t, dir)
	r := onlyResult(t, seen)
	if r["subtype"] != "error_during_execution" || r["is_error"] != true {
		t.Errorf("result = %v", r)
	}
	_, st := readSession(t, dir)
	if st.Operation != nil || st.LastFinished.Outcome != session.OutcomeAborted {
		t.Errorf("session: operation %v, last %v; want an aborted run", st.Operation, st.LastFinished)
	}
}

func TestSDKResume(t *testing.T) {
	dir := t.TempDir()
	srv := providertest.New(t, providertest.Reply{Text: "First answer."}, providertest.Reply{Text: "Second answer."})
	first := sdkClient(t, srv, dir, "stream")
	id := onlyResult(t, first)["session_id"].(string)

	second := sdkClient(t, srv, dir, "resume", "HL_SESSION="+id)
	r := onlyResult(t, second)
	if r["session_id"] != id || r["result"] != "Second answer." {
		t.Fatalf("resumed result = %v; want session %s", r, id)
	}
	if init := messages(second, "system", "init"); len(init) != 1 || init[0]["session_id"] != id {
		t.Errorf("resumed init = %v", init)
	}
	reqs := srv.Requests()
	if body := string(reqs[1].Body); !strings.Contains(body, "say hello") || !strings.Contains(body, "First answer.") {
		t.Errorf("the resumed request lacks the first turn: %s", body)
	}
	if sys := reqs[1].Chat.Messages[0]; sys.Content == nil || !strings.HasSuffix(*sys.Content, "\n\nAnswer in one line.") || len(*sys.Content) < 200 {
		t.Errorf("the SDK's appended system prompt: %+v", sys)
	}
	gotID, st := readSession(t, dir)
	if gotID != id || len(st.Transcript) != 4 {
		t.Errorf("session %s has %d messages; want %s with 4", gotID, len(st.Transcript), id)
	}
}

func TestSDKControlRequests(t *testing.T) {
	dir := t.TempDir()
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: "w1", Name: "write", Arguments: `{"path":"notes.txt","content":"noted\n"}`}}},
		providertest.Reply{Text: "Still here."})
	seen := sdkClient(t, srv, dir, "control")
	if msg, _ := seen["unknownControl"].(string); !strings.Contains(msg, "rewind_files") {
		t.Errorf("the unsupported control request was answered %q; want an error naming it", msg)
	}
	if st, ok := seen["mcpStatus"].([]any); !ok || len(st) != 0 {
		t.Errorf("mcpServerStatus() = %v; want no servers", seen["mcpStatus"])
	}
	if cu, _ := seen["contextUsage"].(map[string]any); cu["maxTokens"] != float64(128000) || cu["model"] == "" || len(cu["categories"].([]any)) != 2 {
		t.Errorf("getContextUsage() = %v", seen["contextUsage"])
	}
	if mode, _ := seen["mode"].(map[string]any); mode["mode"] != "acceptEdits" {
		t.Errorf("setPermissionMode returned %v", seen["mode"])
	}
	if b, err := os.ReadFile(filepath.Join(dir, "notes.txt")); err != nil || string(b) != "noted\n" {
		t.Errorf("notes.txt = %q, %v: acceptEdits did not let the write run", b, err)
	}
	if inits := messages(seen, "system", "init"); len(inits) != 1 || inits[0]["permissionMode"] != "acceptEdits" {
		t.Errorf("init = %v", inits)
	}
	r := onlyResult(t, seen)
	if r["subtype"] != "success" || r["result"] != "Still here." {
		t.Errorf("result = %v", r)
	}
}

func TestSDKMalformedInput(t *testing.T) {
	dir := t.TempDir()
	srv := providertest.New(t)
	seen := sdkClient(t, srv, dir, "malformed")
	r := onlyResult(t, seen)
	errs, _ := r["errors"].([]any)
	if r["is_error"] != true || len(errs) != 1 || !strings.Contains(errs[0].(string), "input line") {
		t.Fatalf("result = %v", r)
	}
	if thrown, _ := seen["thrown"].(string); !strings.Contains(thrown, "exited with code 1") && !strings.Contains(thrown, "input line") {
		t.Errorf("the SDK reported %q; want the exit code 1", thrown)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d model requests for a malformed message", n)
	}
}

func TestSDKCloseMidRun(t *testing.T) {
	dir := t.TempDir()
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: "call-long", Name: "bash", Arguments: longCommand}}},
	)
	sdkClient(t, srv, dir, "close")
	noneLeft(t, dir)
	_, st := readSession(t, dir)
	if st.Operation != nil || st.LastFinished.Outcome != session.OutcomeAborted {
		t.Errorf("session: operation %v, last %v; want an aborted run", st.Operation, st.LastFinished)
	}
}

// A tiny-go the SDK was driving is killed (SIGKILL) in the middle of a
// command; resuming its session id through the SDK recovers the open run
// first (the command is not run again: its result is the contract's
// error, and the run goes on), and then answers the new prompt.
func TestSDKResumeAfterKill(t *testing.T) {
	dir := t.TempDir()
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: "call-long", Name: "bash",
			Arguments: `{"command":"echo run >> runs.txt; sleep 300 & echo $! > $MARKS/sleep.pid; wait"}`}}},
		providertest.Reply{Text: "The interrupted run goes on."}, // recovery finishes the open run first
		providertest.Reply{Text: "Recovered."},
	)
	p := start(t, srv, dir, append(strings.Fields(streamArgs), "--permission-mode=bypassPermissions")...)
	p.send(initialize)
	p.send(userLine("run the long command"))
	init := p.next("system")
	waitFile(t, filepath.Join(marksOf(t, dir), "sleep.pid"))
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()
	id := init["session_id"].(string)

	seen := sdkClient(t, srv, dir, "resume", "HL_SESSION="+id)
	r := onlyResult(t, seen)
	if r["subtype"] != "success" || r["result"] != "Recovered." || r["session_id"] != id {
		t.Fatalf("result = %v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "runs.txt")); string(b) != "run\n" {
		t.Errorf("runs.txt = %q: the command ran again", b)
	}
	noneLeft(t, dir)
	_, st := readSession(t, dir)
	if st.Operation != nil || st.LastFinished.Outcome != session.OutcomeCompleted {
		t.Errorf("session: operation %v, last %v", st.Operation, st.LastFinished)
	}
	var callResult string
	for _, m := range st.Transcript {
		if m.Role == session.RoleTool && m.ToolCallID == "call-long" && m.Content != nil {
			callResult = *m.Content
		}
	}
	if !strings.Contains(callResult, "not replayed") {
		t.Errorf("the killed call's result is %q; want the contract's text", callResult)
	}
}

// tiny-go dies while a call waits for the SDK's permission: nothing of
// the call is durable, so resuming the session through the SDK asks about
// it again (during the recovery, before the new prompt), and the allowed
// call runs once.
func TestSDKResumeAsksAgainAfterKillDuringPermission(t *testing.T) {
	dir := t.TempDir()
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: "call-ask", Name: "bash", Arguments: `{"command":"echo ran >> runs.txt"}`}}},
		providertest.Reply{Text: "The recovered run is done."},
		providertest.Reply{Text: "Second answer."},
	)
	p := start(t, srv, dir, append(strings.Fields(streamArgs), "--permission-prompt-tool=stdio")...)
	p.send(initialize)
	p.send(userLine("append a line"))
	init := p.next("system")
	if req := p.next("control_request"); req["request"].(map[string]any)["subtype"] != "can_use_tool" {
		t.Fatalf("request = %v", req)
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()
	if _, err := os.Stat(filepath.Join(dir, "runs.txt")); !os.IsNotExist(err) {
		t.Fatal("the call ran without an answer")
	}

	seen := sdkClient(t, srv, dir, "resumeAllow", "HL_SESSION="+init["session_id"].(string))
	perms := seen["permissions"].([]any)
	if len(perms) != 1 || perms[0].(map[string]any)["toolUseID"] != "call-ask" {
		t.Fatalf("permission requests = %v; want the waiting call once", perms)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "runs.txt")); string(b) != "ran\n" {
		t.Errorf("runs.txt = %q; want one run", b)
	}
	if r := onlyResult(t, seen); r["result"] != "Second answer." {
		t.Errorf("result = %v", r)
	}
}

// The SDK closes stdin right after the prompt (the generator ended) while
// the model is answering: the turn finishes and the SDK gets the answer.
// The generator ends once the model request has come, so the end of input
// surely reaches a running turn.
func TestSDKPromptEndsBeforeTheAnswer(t *testing.T) {
	dir := t.TempDir()
	marks := marksOf(t, dir)
	release := make(chan struct{})
	close(release)
	srv := providertest.New(t, gatedReply(func() {
		_ = os.WriteFile(filepath.Join(marks, "arrived"), nil, 0o644)
	}, release, "hello back"))
	seen := sdkClient(t, srv, dir, "closeEarly")
	if r := onlyResult(t, seen); r["subtype"] != "success" || r["result"] != "hello back" {
		t.Fatalf("result = %v; want the answer", r)
	}
	if e, _ := seen["error"].(string); e != "" {
		t.Errorf("the SDK program failed: %s", e)
	}
}
