package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/testenv"
)

// hookRun is a project with Claude Code hooks, driven through the real
// binary against the scripted model.
type hookRun struct {
	*cliRun
	srv  *providertest.Server
	home string
}

func newHookRun(t *testing.T, settings string, replies ...providertest.Reply) *hookRun {
	srv := providertest.New(t, replies...)
	c := newCLI(t, srv)
	// The machine's own ~/.claude must not count.
	home := t.TempDir()
	c.env["HOME"] = home
	c.env["TINY_NOTIFY"] = "off"
	h := &hookRun{cliRun: c, srv: srv, home: home}
	if settings != "" {
		c.write(".claude/settings.json", settings)
	}
	return h
}

// script writes an executable hook script under .claude/hooks.
func (h *hookRun) script(name, body string) {
	h.t.Helper()
	p := filepath.Join(h.dir, ".claude", "hooks", name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		h.t.Fatal(err)
	}
}

// run runs the binary with args and returns its exit code, stdout and
// stderr.
func (h *hookRun) run(args ...string) (int, string, string) {
	h.t.Helper()
	cmd := h.command(h.srv.URL(), append([]string{"--cwd", h.dir}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		h.t.Fatal(err)
	}
	return code, out.String(), errb.String()
}

// inputs are the JSON inputs the hook scripts saved (by saveInput), in
// the order they ran.
func (h *hookRun) inputs(prefix string) []map[string]any {
	h.t.Helper()
	files, _ := filepath.Glob(filepath.Join(h.dir, prefix+"-*.json"))
	sort.Strings(files)
	var out []map[string]any
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			h.t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			h.t.Fatalf("%s is not JSON: %v: %s", f, err, b)
		}
		out = append(out, m)
	}
	return out
}

// saveInput is a script line that keeps the hook's stdin as
// <prefix>-<n>.json in the project (n counts up), renamed into place so
// a test never reads half of one.
func saveInput(prefix string) string {
	return `n=$(ls "$CLAUDE_PROJECT_DIR"/` + prefix + `-*.json 2>/dev/null | wc -l)
input=$(cat)
printf '%s' "$input" > "$CLAUDE_PROJECT_DIR/` + prefix + `.tmp"
mv "$CLAUDE_PROJECT_DIR/` + prefix + `.tmp" "$CLAUDE_PROJECT_DIR/` + prefix + `-$(printf %03d $n).json"
`
}

// toolMessage is the content of the tool message answering id in the
// request.
func toolMessage(r providertest.Request, id string) string {
	for _, m := range r.Chat.Messages {
		if m.Role == "tool" && m.ToolCallID == id && m.Content != nil {
			return *m.Content
		}
	}
	return ""
}

// lastUser is the content of the last user message of the request.
func hookLastUser(r providertest.Request) string {
	for i := len(r.Chat.Messages) - 1; i >= 0; i-- {
		if m := r.Chat.Messages[i]; m.Role == "user" && m.Content != nil {
			return *m.Content
		}
	}
	return ""
}

const guardSettings = `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"$CLAUDE_PROJECT_DIR/.claude/hooks/guard.sh","timeout":10}]}]}}`

// The Bash guard every Claude Code user has: exit 2 on rm -rf. Nothing is
// deleted, and the model's next request carries the guard's reason.
func TestHookGuardBlocksRmRf(t *testing.T) {
	h := newHookRun(t, guardSettings,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", `{"command":"rm -rf victim"}`)}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c2", "bash", `{"command":"echo safe > safe.txt"}`)}},
		providertest.Reply{Text: "Done."},
	)
	h.script("guard.sh", `input=$(cat)
case "$input" in
*'rm -rf'*) echo "Blocked: rm -rf is not allowed in this repository" >&2; exit 2;;
esac
exit 0
`)
	h.write("victim/keep.txt", "precious\n")
	code, _, stderr := h.run("clean up")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "victim", "keep.txt")); err != nil {
		t.Fatalf("the guarded rm -rf ran: %v", err)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "safe.txt")); err != nil {
		t.Fatalf("the allowed command did not run: %v", err)
	}
	reqs := h.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	got := toolMessage(reqs[1], "c1")
	if !strings.Contains(got, "Blocked: rm -rf is not allowed in this repository") || !strings.Contains(got, "PreToolUse hook blocked") {
		t.Errorf("the model was not told why: %q", got)
	}
}

// PostToolUse on Write|Edit gets Claude Code's input: tool_name, the
// absolute tool_input.file_path, tool_response, and the common fields.
func TestHookPostToolUseWriteEdit(t *testing.T) {
	h := newHookRun(t, `{"hooks":{"PostToolUse":[{"matcher":"Write|Edit","hooks":[{"type":"command","command":".claude/hooks/post.sh"}]}]}}`,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "write", `{"path":"c.txt","content":"x\n"}`)}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c2", "edit", `{"path":"c.txt","edits":[{"oldText":"x","newText":"y"}]}`)}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c3", "bash", `{"command":"true"}`)}},
		providertest.Reply{Text: "Done."},
	)
	h.script("post.sh", saveInput("post")+`echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"formatted by the hook"}}'`)
	if code, _, stderr := h.run("write and edit"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	in := h.inputs("post")
	if len(in) != 2 {
		t.Fatalf("the hook ran %d times, want 2 (write, edit; not bash): %v", len(in), in)
	}
	session := h.sessions()[0]
	id := strings.TrimSuffix(filepath.Base(session), ".jsonl")
	id = id[strings.LastIndexByte(id, '_')+1:]
	want := filepath.Join(h.dir, "c.txt")
	for i, name := range []string{"Write", "Edit"} {
		m := in[i]
		ti, _ := m["tool_input"].(map[string]any)
		switch {
		case m["tool_name"] != name, ti["file_path"] != want:
			t.Errorf("input %d: tool_name %v, file_path %v; want %s, %s", i, m["tool_name"], ti["file_path"], name, want)
		case m["hook_event_name"] != "PostToolUse", m["session_id"] != id, m["cwd"] != h.dir,
			m["transcript_path"] != strings.TrimSuffix(session, ".jsonl")+".d/transcript.jsonl":
			t.Errorf("input %d: common fields wrong: %v", i, m)
		case m["tool_response"] == nil, m["tool_use_id"] != []string{"c1", "c2"}[i]:
			t.Errorf("input %d: no tool_response or wrong tool_use_id: %v", i, m)
		}
	}
	if e := in[1]["tool_input"].(map[string]any); e["old_string"] != "x" || e["new_string"] != "y" {
		t.Errorf("Edit input not in Claude Code's shape: %v", e)
	}
	if got := toolMessage(h.srv.Requests()[1], "c1"); !strings.Contains(got, "formatted by the hook") {
		t.Errorf("additionalContext did not reach the model: %q", got)
	}
	if r := in[1]["tool_response"].(map[string]any); r["originalFile"] != "x\n" || r["structuredPatch"] == nil {
		t.Errorf("Edit's tool_response is not Claude Code's: %v", r)
	}
	checkClaudeTranscript(t, in[1]["transcript_path"].(string), id, "write and edit", "c2")
}

// checkClaudeTranscript reads a transcript_path as a hook would: Claude
// Code's lines, the prompt first, the call callID as a tool_use and its
// tool_result.
func checkClaudeTranscript(t *testing.T, path, sessionID, prompt, callID string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("transcript_path: %v", err)
	}
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("transcript line %q: %v", l, err)
		}
		if m["sessionId"] != sessionID || m["uuid"] == nil || m["timestamp"] == nil {
			t.Errorf("transcript line without Claude Code's envelope: %v", m)
		}
		lines = append(lines, m)
	}
	first := lines[0]["message"].(map[string]any)
	if lines[0]["type"] != "user" || lines[0]["parentUuid"] != nil || first["content"] != prompt {
		t.Errorf("first transcript line: %v", lines[0])
	}
	var use, result bool
	for _, l := range lines {
		blocks, _ := l["message"].(map[string]any)["content"].([]any)
		for _, bl := range blocks {
			bm := bl.(map[string]any)
			use = use || (l["type"] == "assistant" && bm["type"] == "tool_use" && bm["id"] == callID && bm["name"] == "Edit")
			result = result || (l["type"] == "user" && bm["type"] == "tool_result" && bm["tool_use_id"] == callID)
		}
	}
	if !use || !result {
		t.Errorf("the transcript lacks the call %s (tool_use %v, tool_result %v):\n%s", callID, use, result, b)
	}
}

// UserPromptSubmit's plain stdout, and SessionStart's, are context for
// the model; SessionStart says startup, then resume.
func TestHookPromptAndSessionStartContext(t *testing.T) {
	h := newHookRun(t, `{"hooks":{
"UserPromptSubmit":[{"hooks":[{"type":"command","command":"sh .claude/hooks/ups.sh"}]}],
"SessionStart":[{"matcher":"startup|resume","hooks":[{"type":"command","command":"sh .claude/hooks/start.sh"}]}]}}`,
		providertest.Reply{Text: "First."},
		providertest.Reply{Text: "Second."},
	)
	h.script("ups.sh", saveInput("ups")+`echo "The build uses Bazel; run bazel test //..."`)
	h.script("start.sh", saveInput("start")+`echo "Today's on-call is Ada."`)
	if code, _, stderr := h.run("first prompt"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if code, _, stderr := h.run("--continue", "second prompt"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	reqs := h.srv.Requests()
	first, second := hookLastUser(reqs[0]), hookLastUser(reqs[1])
	for _, want := range []string{"first prompt", "The build uses Bazel", "on-call is Ada"} {
		if !strings.Contains(first, want) {
			t.Errorf("first request's prompt lacks %q: %q", want, first)
		}
	}
	if !strings.Contains(second, "The build uses Bazel") || !strings.Contains(second, "on-call is Ada") {
		t.Errorf("second request's prompt lacks the hooks' context: %q", second)
	}
	// The first prompt keeps its context in later requests too.
	if got := *reqs[1].Chat.Messages[1].Content; !strings.Contains(got, "The build uses Bazel") {
		t.Errorf("the first prompt lost its context in the second request: %q", got)
	}
	starts := h.inputs("start")
	if len(starts) != 2 || starts[0]["source"] != "startup" || starts[1]["source"] != "resume" {
		t.Fatalf("SessionStart inputs: %v", starts)
	}
	if ups := h.inputs("ups"); len(ups) != 2 || ups[0]["prompt"] != "first prompt" {
		t.Errorf("UserPromptSubmit inputs: %v", ups)
	}
	if st := h.state(); len(st.Transcript) != 4 || *st.Transcript[0].Content != "first prompt" {
		t.Errorf("the session holds the prompt as typed: %v", st.Transcript)
	}
}

// A Stop hook that blocks makes the agent go on once, as an ordinary new
// run; the second time it sees stop_hook_active and lets it stop.
func TestHookStopContinuesOnce(t *testing.T) {
	h := newHookRun(t, `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"sh .claude/hooks/stop.sh"}]}]}}`,
		providertest.Reply{Text: "All done, I think."},
		providertest.Reply{Text: "Tests pass now."},
	)
	h.script("stop.sh", saveInput("stop")+`case "$input" in
*'"stop_hook_active":true'*) exit 0;;
esac
echo '{"decision":"block","reason":"Run the tests before you stop."}'
`)
	code, stdout, stderr := h.run("fix it")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	reqs := h.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if got := hookLastUser(reqs[1]); !strings.Contains(got, "Run the tests before you stop.") {
		t.Errorf("the continuation's prompt: %q", got)
	}
	in := h.inputs("stop")
	if len(in) != 2 || in[0]["stop_hook_active"] != false || in[1]["stop_hook_active"] != true {
		t.Fatalf("Stop inputs: %v", in)
	}
	if in[0]["last_assistant_message"] != "All done, I think." {
		t.Errorf("last_assistant_message: %v", in[0]["last_assistant_message"])
	}
	if !strings.Contains(stdout, "Tests pass now.") {
		t.Errorf("stdout: %q", stdout)
	}
	st := h.state()
	if !st.Idle() || len(st.Transcript) != 4 {
		t.Errorf("want two finished runs, got %d messages", len(st.Transcript))
	}
}

// A hook that exits 1 does not block: the call runs, and one line says so.
func TestHookExitOneDoesNotBlock(t *testing.T) {
	h := newHookRun(t, `{"hooks":{"PreToolUse":[{"matcher":"bash","hooks":[{"type":"command","command":"echo 'lint server unreachable' >&2; exit 1"}]}]}}`,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", `{"command":"echo ran > ran.txt"}`)}},
		providertest.Reply{Text: "Done."},
	)
	code, _, stderr := h.run("go")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "ran.txt")); err != nil {
		t.Fatal("the call did not run")
	}
	if n := strings.Count(stderr, "exited 1: lint server unreachable; not blocking"); n != 1 {
		t.Errorf("want one line about the hook, got %d:\n%s", n, stderr)
	}
}

// Bad hooks each get one clear line, and lose nothing: the call runs,
// the session completes.
func TestHookBadHooks(t *testing.T) {
	h := newHookRun(t, `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[
{"type":"command","command":"sleep 60","timeout":1},
{"type":"command","command":"head -c 10000000 /dev/zero | tr '\\0' x"},
{"type":"command","command":"echo '{not json'"},
{"type":"command","command":"$CLAUDE_PROJECT_DIR/.claude/hooks/missing.sh"}]}]}}`,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", `{"command":"echo ran > ran.txt"}`)}},
		providertest.Reply{Text: "Done."},
	)
	code, _, stderr := h.run("go")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "ran.txt")); err != nil {
		t.Fatal("the call did not run")
	}
	for _, want := range []string{
		`"sleep 60" (` + filepath.Join(h.dir, ".claude", "settings.json") + `) timed out after 1s; its process group was killed`,
		"printed more than 256 KiB; its output was ignored",
		"invalid JSON output",
		"was not found (exit 127)",
	} {
		if n := strings.Count(stderr, want); n != 1 {
			t.Errorf("%q appears %d times in:\n%s", want, n, stderr)
		}
	}
	if st := h.state(); !st.Idle() || len(st.Transcript) != 4 {
		t.Errorf("the session did not complete: %d messages", len(st.Transcript))
	}
}

// With hook_fail_closed a guard that fails blocks its call.
func TestHookFailClosed(t *testing.T) {
	h := newHookRun(t, `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"sleep 60","timeout":1}]}]}}`,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", `{"command":"echo ran > ran.txt"}`)}},
		providertest.Reply{Text: "Done."},
	)
	h.write(".tiny-agent/config.toml", "hook_fail_closed = true\n")
	if code, _, stderr := h.run("go"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "ran.txt")); err == nil {
		t.Fatal("the call ran although its guard failed and hooks fail closed")
	}
	if got := toolMessage(h.srv.Requests()[1], "c1"); !strings.Contains(got, "hook_fail_closed") {
		t.Errorf("tool result: %q", got)
	}
}

// `tiny-go config` lists each hook and where it came from, config.toml's
// [hooks] included.
func TestConfigShowsHooks(t *testing.T) {
	h := newHookRun(t, guardSettings)
	h.write(".claude/settings.local.json", `{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"make test"}]}]},"permissions":{"allow":[]}}`)
	h.write(".tiny-agent/config.toml", "[[hooks.PostToolUse]]\nmatcher = \"Write|Edit\"\n[[hooks.PostToolUse.hooks]]\ntype = \"command\"\ncommand = \"gofmt -w .\"\ntimeout = 5\n")
	code, stdout, stderr := h.main("", "config")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"PreToolUse   Bash        $CLAUDE_PROJECT_DIR/.claude/hooks/guard.sh  10s      " + filepath.Join(h.dir, ".claude", "settings.json"),
		"Stop         *           make test",
		filepath.Join(h.dir, ".claude", "settings.local.json"),
		"PostToolUse  Write|Edit  gofmt -w .",
		filepath.Join(h.dir, ".tiny-agent", "config.toml") + ":1",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("config output lacks %q:\n%s", want, stdout)
		}
	}
}

// SIGKILL after a PreToolUse decision is recorded and before the call's
// toolStarted commits: the resume neither runs the hook again nor asks
// for approval (the hook allowed it), and runs the input the hook gave.
func TestHookCrashBetweenDecisionAndTool(t *testing.T) {
	h := newHookRun(t, `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"sh .claude/hooks/rewrite.sh"}]}]}}`,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", `{"command":"echo original >> ran.txt"}`)}},
		providertest.Reply{Text: "Done."},
	)
	h.script("rewrite.sh", saveInput("pre")+`echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"reviewed","updatedInput":{"command":"echo rewritten >> ran.txt"}}}'`)
	// Commits: prompt, stepAttempt, reply, then the call's toolStarted:
	// killed just before that one is written.
	h.env[crashEnv] = "before:4"
	code, _, stderr := h.run("--approval", "ask", "go")
	if code != -1 {
		t.Fatalf("the child was not killed (exit %d): %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "ran.txt")); err == nil {
		t.Fatal("the call ran before its intent was durable")
	}
	delete(h.env, crashEnv)
	// --approval ask with no terminal: a question would fail the resume.
	code, _, stderr = h.run("--approval", "ask", "--continue", "--json")
	if code != 0 {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	if n := len(h.inputs("pre")); n != 1 {
		t.Errorf("the PreToolUse hook ran %d times", n)
	}
	b, _ := os.ReadFile(filepath.Join(h.dir, "ran.txt"))
	if string(b) != "rewritten\n" {
		t.Errorf("ran.txt = %q, want the hook's input run once", b)
	}
	st := h.state()
	if !st.Idle() || len(st.Transcript) != 4 {
		t.Fatalf("the run did not finish: %d messages", len(st.Transcript))
	}
	if !strings.Contains(string(h.sessionBytes()), `"arguments":{"command":"echo rewritten >> ran.txt"}`) {
		t.Error("toolStarted does not record the input that ran")
	}
}

// SIGKILL while a PostToolUse hook runs: the resume reports it and runs
// neither the hook nor the tool again.
func TestHookCrashDuringPostToolUse(t *testing.T) {
	h := newHookRun(t, `{"hooks":{"PostToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"sh .claude/hooks/slow.sh"}]}]}}`,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", `{"command":"echo once >> ran.txt"}`)}},
		providertest.Reply{Text: "Done."},
	)
	h.script("slow.sh", saveInput("post")+`sleep 30`)
	cmd := h.command(h.srv.URL(), "--cwd", h.dir, "go")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return len(h.inputs("post")) == 1 }, "the PostToolUse hook to start")
	_ = cmd.Process.Kill()
	_ = cmd.Wait()

	code, _, stderr := h.run("--continue", "--json")
	if code != 0 {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	if n := strings.Count(stderr, "the PostToolUse hooks of tool call c1 were interrupted"); n != 1 {
		t.Errorf("want one line about the interrupted hook, got %d:\n%s", n, stderr)
	}
	if n := len(h.inputs("post")); n != 1 {
		t.Errorf("the PostToolUse hook ran %d times", n)
	}
	if b, _ := os.ReadFile(filepath.Join(h.dir, "ran.txt")); string(b) != "once\n" {
		t.Errorf("ran.txt = %q", b)
	}
	if st := h.state(); !st.Idle() || len(st.Transcript) != 4 {
		t.Fatalf("the run did not finish: %d messages", len(st.Transcript))
	}
	// A later resume does not report it again.
	h.srv.Enqueue(providertest.Reply{Text: "Again."})
	if _, _, stderr := h.run("--continue", "more"); strings.Contains(stderr, "interrupted") {
		t.Errorf("reported twice:\n%s", stderr)
	}
}

func (h *hookRun) sessionBytes() []byte {
	h.t.Helper()
	b, err := os.ReadFile(h.sessions()[0])
	if err != nil {
		h.t.Fatal(err)
	}
	return b
}

func waitFor(t *testing.T, ok func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(testenv.Scale(20 * time.Second))
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Keys never reach a hook: not in its environment, not in its input
// (even when the model's command holds the key's value).
func TestHookNeverSeesKeys(t *testing.T) {
	const key = "sk-or-v1-hook-test-secret-0123456789"
	h := newHookRun(t, `{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"sh .claude/hooks/spy.sh"}]}]}}`,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", `{"command":"echo `+key+` > /dev/null"}`)}},
		providertest.Reply{Text: "Done."},
	)
	h.env["OPENROUTER_API_KEY"] = key
	h.script("spy.sh", saveInput("spy")+`env > "$CLAUDE_PROJECT_DIR/spy-env.txt"`)
	if code, _, stderr := h.run("go"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	env, err := os.ReadFile(filepath.Join(h.dir, "spy-env.txt"))
	if err != nil {
		t.Fatal(err)
	}
	in := h.inputs("spy")
	if len(in) != 1 {
		t.Fatalf("%d inputs", len(in))
	}
	input, _ := json.Marshal(in[0])
	for what, b := range map[string][]byte{"environment": env, "input": input} {
		if bytes.Contains(b, []byte(key)) {
			t.Errorf("the key is in the hook's %s", what)
		}
	}
	if !bytes.Contains(env, []byte("CLAUDE_PROJECT_DIR="+h.dir)) || !bytes.Contains(env, []byte("TINY_PROJECT_DIR="+h.dir)) {
		t.Errorf("project dir variables missing:\n%s", env)
	}
}

// A PermissionRequest hook answers for the user: allowed calls run
// without a question (stdin has no answer to give), denied ones tell the
// model why. A failed command runs PostToolUseFailure, not PostToolUse;
// a turn longer than notify_after runs the Notification hooks; the
// process ends with SessionEnd.
func TestHookPermissionFailureNotificationEnd(t *testing.T) {
	h := newHookRun(t, `{"hooks":{
"PermissionRequest":[{"matcher":"Bash","hooks":[{"type":"command","command":"sh .claude/hooks/perm.sh"}]}],
"PostToolUse":[{"hooks":[{"type":"command","command":"sh .claude/hooks/post.sh"}]}],
"PostToolUseFailure":[{"hooks":[{"type":"command","command":"sh .claude/hooks/fail.sh"}]}],
"Notification":[{"matcher":"idle_prompt","hooks":[{"type":"command","command":"sh .claude/hooks/note.sh"}]}],
"SessionEnd":[{"hooks":[{"type":"command","command":"sh .claude/hooks/end.sh"}]}]}}`,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", `{"command":"echo ok > ok.txt"}`)}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c2", "bash", `{"command":"echo no > no.txt"}`)}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c3", "bash", `{"command":"echo failing; exit 3"}`)}},
		providertest.Reply{Text: "Done."},
	)
	h.script("perm.sh", saveInput("perm")+`case "$input" in
*'no.txt'*) echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"not that file"}}}';;
*) echo '{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}';;
esac`)
	h.script("post.sh", saveInput("post"))
	h.script("fail.sh", saveInput("fail"))
	h.script("note.sh", saveInput("note"))
	h.script("end.sh", saveInput("end"))
	h.env["TINY_NOTIFY_AFTER"] = "1ns"
	code, _, stderr := h.run("--approval", "ask", "go")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "ok.txt")); err != nil {
		t.Error("the call the hook allowed did not run")
	}
	if _, err := os.Stat(filepath.Join(h.dir, "no.txt")); err == nil {
		t.Error("the call the hook denied ran")
	}
	if got := toolMessage(h.srv.Requests()[2], "c2"); !strings.Contains(got, "not that file") {
		t.Errorf("the model was told %q", got)
	}
	if n := len(h.inputs("perm")); n != 3 {
		t.Errorf("PermissionRequest ran %d times, want 3", n)
	}
	post, fail := h.inputs("post"), h.inputs("fail")
	if len(post) != 1 || post[0]["tool_use_id"] != "c1" {
		t.Errorf("PostToolUse inputs: %v", post)
	}
	if len(fail) != 1 || fail[0]["tool_use_id"] != "c3" || fail[0]["hook_event_name"] != "PostToolUseFailure" || !strings.Contains(fmt.Sprint(fail[0]["error"]), "failing") {
		t.Errorf("PostToolUseFailure inputs: %v", fail)
	}
	if note := h.inputs("note"); len(note) != 1 || note[0]["notification_type"] != "idle_prompt" {
		t.Errorf("Notification inputs: %v", note)
	}
	if end := h.inputs("end"); len(end) != 1 || end[0]["reason"] != "other" {
		t.Errorf("SessionEnd inputs: %v", end)
	}
}

// A UserPromptSubmit hook that exits 2 refuses the prompt: the user sees
// why, and nothing of it reaches the model or the session.
func TestHookPromptBlocked(t *testing.T) {
	h := newHookRun(t, `{"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"echo 'prompts may not mention the password' >&2; exit 2"}]}]}}`)
	code, _, stderr := h.run("what is the password")
	if code == 0 || !strings.Contains(stderr, "a UserPromptSubmit hook blocked the prompt: prompts may not mention the password\n") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := len(h.srv.Requests()); n != 0 {
		t.Errorf("%d model requests", n)
	}
	for _, s := range h.sessions() {
		if b, _ := os.ReadFile(s); bytes.Contains(b, []byte("password")) {
			t.Errorf("the refused prompt is in %s", s)
		}
	}
}

// An automatic compaction runs PreCompact and PostCompact (trigger auto),
// then SessionStart with source compact, whose context goes with the next
// prompt.
func TestHookCompaction(t *testing.T) {
	var replies []providertest.Reply
	// Reported prompts grow past 0.85 of --context-window 1000: the run
	// ends for a compaction between steps and a continuation answers.
	for i, prompt := range []int64{300, 500, 700, 900} {
		replies = append(replies, providertest.Reply{
			ToolCalls: []providertest.ToolCall{toolCall(providertest.LongTaskCallID(i+1), "read", `{"path":"a.txt"}`)},
			Usage:     &providertest.Usage{PromptTokens: prompt, CompletionTokens: 5},
		})
	}
	replies = append(replies,
		providertest.Reply{Text: "SUMMARY OF THE WORK", Usage: &providertest.Usage{PromptTokens: 400, CompletionTokens: 5}},
		providertest.Reply{Text: "all done", Usage: &providertest.Usage{PromptTokens: 350, CompletionTokens: 5}},
		providertest.Reply{Text: "next answered"},
	)
	h := newHookRun(t, `{"hooks":{
"PreCompact":[{"matcher":"auto","hooks":[{"type":"command","command":"sh .claude/hooks/pre.sh"}]}],
"PostCompact":[{"hooks":[{"type":"command","command":"sh .claude/hooks/post.sh"}]}],
"SessionStart":[{"matcher":"compact","hooks":[{"type":"command","command":"sh .claude/hooks/start.sh"}]}]}}`, replies...)
	h.write("a.txt", "alpha\n")
	h.script("pre.sh", saveInput("precompact"))
	h.script("post.sh", saveInput("postcompact"))
	h.script("start.sh", saveInput("start")+`echo "Re-read AGENTS.md after a compaction."`)
	if code, _, stderr := h.run("--context-window", "1000", "do the task"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	pre, post, start := h.inputs("precompact"), h.inputs("postcompact"), h.inputs("start")
	if len(pre) != 1 || pre[0]["trigger"] != "auto" || len(post) != 1 || post[0]["trigger"] != "auto" {
		t.Fatalf("PreCompact %v, PostCompact %v", pre, post)
	}
	if len(start) != 1 || start[0]["source"] != "compact" {
		t.Fatalf("SessionStart inputs: %v", start)
	}
	if code, _, stderr := h.run("--context-window", "1000", "--continue", "next"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	reqs := h.srv.Requests()
	if last := hookLastUser(reqs[len(reqs)-1]); !strings.Contains(last, "Re-read AGENTS.md after a compaction.") || !strings.Contains(last, "next") {
		t.Fatalf("the next prompt: %q", last)
	}
}

// SIGTERM (the Esc path) while a PreToolUse hook runs aborts the call as
// never started: the hook's process group is killed, the command never
// runs, and the session ends aborted.
func TestHookAbortDuringPreToolUse(t *testing.T) {
	h := newHookRun(t, `{"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"sh .claude/hooks/slow.sh"}]}]}}`,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", `{"command":"echo ran > ran.txt"}`)}},
	)
	errb := h.termDuringSlowHook()
	if _, err := os.Stat(filepath.Join(h.dir, "ran.txt")); err == nil {
		t.Fatal("the call ran after the abort")
	}
	st := h.state()
	if !st.Idle() || st.LastFinished.Outcome != session.OutcomeAborted {
		t.Fatalf("session: idle %v, last %+v\n%s", st.Idle(), st.LastFinished, errb.String())
	}
}

// SIGTERM (the Esc path) while a PostToolUse hook runs stops the hook at
// once, says so, and keeps the result; the run ends aborted.
func TestHookAbortDuringPostToolUse(t *testing.T) {
	h := newHookRun(t, `{"hooks":{"PostToolUse":[{"hooks":[{"type":"command","command":"sh .claude/hooks/slow.sh"}]}]}}`,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", `{"command":"echo ran >> ran.txt"}`)}},
	)
	errb := h.termDuringSlowHook()
	if n := strings.Count(errb.String(), "the PostToolUse hooks of tool call c1 were stopped; they are not run again"); n != 1 {
		t.Errorf("want one line about the stopped hook:\n%s", errb.String())
	}
	if b, _ := os.ReadFile(filepath.Join(h.dir, "ran.txt")); string(b) != "ran\n" {
		t.Errorf("ran.txt = %q", b)
	}
	st := h.state()
	if !st.Idle() || st.LastFinished.Outcome != session.OutcomeAborted {
		t.Fatalf("session: idle %v, last %+v\n%s", st.Idle(), st.LastFinished, errb.String())
	}
	if !strings.Contains(string(h.sessionBytes()), `"content":"(no output)","role":"tool","tool_call_id":"c1"},"result":{"type":"success"}`) {
		t.Errorf("the tool's result was lost:\n%s", h.sessionBytes())
	}
}

// SIGTERM (the Esc path) while a UserPromptSubmit hook runs stops it:
// the prompt is not accepted, no request is sent, the hook is killed.
func TestHookAbortDuringPromptHook(t *testing.T) {
	h := newHookRun(t, `{"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"sh .claude/hooks/slow.sh"}]}]}}`,
		providertest.Reply{Text: "never"},
	)
	errb := h.termDuringSlowHook()
	if !strings.Contains(errb.String(), "Aborted.") {
		t.Errorf("stderr:\n%s", errb.String())
	}
	if n := len(h.srv.Requests()); n != 0 {
		t.Errorf("%d requests after the prompt was stopped", n)
	}
	for _, s := range h.sessions() {
		if b, _ := os.ReadFile(s); bytes.Contains(b, []byte(`"runStarted"`)) {
			t.Errorf("the stopped prompt was accepted: %s", b)
		}
	}
}

// A subagent's calls pass the same guard as its parent's (a Bash rm -rf
// is blocked, its reason reaches the child), its hooks see its own
// session, and its end runs SubagentStop, not Stop, with the live
// permission mode.
func TestHooksGuardSubagents(t *testing.T) {
	h := newHookRun(t, `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"$CLAUDE_PROJECT_DIR/.claude/hooks/guard.sh"}]}],`+
		`"SubagentStop":[{"hooks":[{"type":"command","command":"$CLAUDE_PROJECT_DIR/.claude/hooks/substop.sh"}]}],`+
		`"Stop":[{"hooks":[{"type":"command","command":"$CLAUDE_PROJECT_DIR/.claude/hooks/stop.sh"}]}]}}`)
	h.script("guard.sh", saveInput("pre")+`case "$input" in
*'rm -rf'*) echo "Blocked: no rm -rf" >&2; exit 2;;
esac
exit 0
`)
	h.script("substop.sh", saveInput("substop"))
	h.script("stop.sh", saveInput("stop"))
	h.write("victim/keep.txt", "precious\n")
	writeAgent(t, h.dir, "cleaner", "---\nname: cleaner\ndescription: Cleans up.\ntools: Bash\n---\nYou are the cleaner agent.\n")
	h.srv.Respond(agentScript{
		parent: func(turn int, last providertest.Message) providertest.Reply {
			if turn == 0 {
				return providertest.Reply{ToolCalls: []providertest.ToolCall{taskCall("t1", "cleaner", "Remove victim.")}}
			}
			return providertest.Reply{Text: "parent heard: " + *last.Content}
		},
		children: map[string]func(int, providertest.Message) providertest.Reply{
			"You are the cleaner agent.": func(turn int, last providertest.Message) providertest.Reply {
				if turn == 0 {
					return providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("k1", "bash", `{"command":"rm -rf victim"}`)}}
				}
				return providertest.Reply{Text: "child saw: " + *last.Content}
			},
		},
	}.reply)
	code, stdout, stderr := h.run("clean up")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "victim", "keep.txt")); err != nil {
		t.Fatalf("the subagent's guarded rm -rf ran: %v", err)
	}
	if !strings.Contains(stdout, "Blocked: no rm -rf") {
		t.Errorf("the guard's reason did not reach the child (and its answer the parent): %q", stdout)
	}
	pre := h.inputs("pre")
	if len(pre) != 1 || pre[0]["tool_name"] != "Bash" {
		t.Fatalf("PreToolUse inputs: %v", pre)
	}
	sub, stop := h.inputs("substop"), h.inputs("stop")
	if len(sub) != 1 || sub[0]["hook_event_name"] != "SubagentStop" || len(stop) != 1 {
		t.Fatalf("SubagentStop ran %d times, Stop %d times: %v %v", len(sub), len(stop), sub, stop)
	}
	// The child's calls name the child's session; its SubagentStop, as
	// Claude Code's, names the parent's, the child as agent_id.
	if pre[0]["session_id"] == stop[0]["session_id"] || pre[0]["session_id"] != sub[0]["agent_id"] ||
		sub[0]["session_id"] != stop[0]["session_id"] || sub[0]["agent_type"] == nil || sub[0]["agent_transcript_path"] == nil {
		t.Errorf("the child's hooks do not see the child's session: pre %v, substop %v (agent %v), stop %v", pre[0]["session_id"], sub[0]["session_id"], sub[0]["agent_id"], stop[0]["session_id"])
	}
	if sub[0]["permission_mode"] != "bypassPermissions" {
		t.Errorf("permission_mode %v in a one-shot (auto) run", sub[0]["permission_mode"])
	}
}

// termDuringSlowHook runs tiny-go with a hook that writes its pid and
// sleeps, sends it SIGTERM (the Esc path) once the hook runs, and waits
// until tiny-go and the hook are gone; it returns tiny-go's stderr.
func (h *hookRun) termDuringSlowHook() *testenv.Buffer {
	t := h.t
	t.Helper()
	h.script("slow.sh", `echo started > "$CLAUDE_PROJECT_DIR/hook.pid"; sleep 30`)
	cmd := h.command(h.srv.URL(), "--cwd", h.dir, "go")
	var errb testenv.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		_, err := os.Stat(filepath.Join(h.dir, "hook.pid"))
		return err == nil && len(hookProcesses(h.dir)) > 0
	}, "the hook to start")
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	waitFor(t, func() bool { return len(hookProcesses(h.dir)) == 0 }, "the hook to be killed")
	return &errb
}

// hookProcesses are the pids of the processes of the hooks of project
// dir, by their environment: a contained hook's own $$ is a pid of its
// namespace, which means nothing here.
func hookProcesses(dir string) []int {
	want := []byte("\x00CLAUDE_PROJECT_DIR=" + dir + "\x00")
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && bytes.Contains(append([]byte{0}, b...), want) {
			pids = append(pids, pid)
		}
	}
	return pids
}
