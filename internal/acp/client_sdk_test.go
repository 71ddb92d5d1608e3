package acp_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/procs"
	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/testenv"
)

// These tests drive `tiny-go acp` with a client we did not write: the
// official ACP TypeScript SDK from npm (testdata/package.json pins it;
// install with `npm ci --prefix internal/acp/testdata`).

// sdkClient runs testdata/client.mjs SCENARIO against a tiny-go acp child in
// dir and returns what the client saw.
func sdkClient(t *testing.T, srv *providertest.Server, dir, scenario string, env ...string) map[string]any {
	t.Helper()
	env = append(append(agentEnv(srv.URL()), env...), "ACP_AGENT="+selfLink(t), `ACP_AGENT_ARGS=["acp"]`, "ACP_CWD="+dir)
	return testenv.NodeClient(t, "@agentclientprotocol/sdk", "", scenario, env)
}

func selfLink(t *testing.T) string {
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

// updates of a kind, in order.
func updatesOf(seen map[string]any, kind string) []map[string]any {
	var out []map[string]any
	for _, u := range seen["updates"].([]any) {
		m := u.(map[string]any)
		if m["sessionUpdate"] == kind {
			out = append(out, m)
		}
	}
	return out
}

// toolStatus is the last status the client was told for a tool call.
func toolStatus(seen map[string]any, id string) string {
	status := ""
	for _, u := range seen["updates"].([]any) {
		m := u.(map[string]any)
		if m["toolCallId"] == id && m["status"] != nil {
			status = m["status"].(string)
		}
	}
	return status
}

func agentText(seen map[string]any) string {
	var b strings.Builder
	for _, u := range updatesOf(seen, "agent_message_chunk") {
		b.WriteString(u["content"].(map[string]any)["text"].(string))
	}
	return b.String()
}

func readState(t *testing.T, dir string) *session.State {
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
	return st
}

func exitCode(seen map[string]any) any { return seen["exit"].(map[string]any)["code"] }

// A prompt whose tool calls need approval: the first is allowed once, the
// second (a write, shown with its diff) rejected; the editor sees every
// call with its kind, location and final status.
func TestSDKClientPromptWithPermissions(t *testing.T) {
	srv := providertest.New(t,
		providertest.Reply{Text: "Making notes.", ToolCalls: []providertest.ToolCall{
			{ID: "c1", Name: "bash", Arguments: `{"command":"touch one.txt"}`},
			{ID: "c2", Name: "write", Arguments: `{"path":"notes.txt","content":"hello\n"}`},
		}},
		providertest.Reply{Text: "Done."},
	)
	dir := t.TempDir()
	seen := sdkClient(t, srv, dir, "permission")

	init := seen["initialize"].(map[string]any)
	if init["protocolVersion"] != 1.0 || init["agentCapabilities"].(map[string]any)["loadSession"] != true {
		t.Fatalf("initialize: %v", init)
	}
	if mode := seen["modes"].(map[string]any)["currentModeId"]; mode != "ask" {
		t.Fatalf("mode %v", mode)
	}
	perms := seen["permissions"].([]any)
	if len(perms) != 2 {
		t.Fatalf("%d permission requests, want 2", len(perms))
	}
	first := perms[0].(map[string]any)
	if got := first["toolCall"].(map[string]any)["toolCallId"]; got != "c1" {
		t.Fatalf("first permission is for %v", got)
	}
	kinds, _ := json.Marshal(first["options"])
	for _, k := range []string{"allow_once", "allow_always", "reject_once", "reject_always"} {
		if !strings.Contains(string(kinds), k) {
			t.Fatalf("options %s lack %s", kinds, k)
		}
	}
	diff, _ := json.Marshal(perms[1].(map[string]any)["toolCall"].(map[string]any)["content"])
	if !strings.Contains(string(diff), `"type":"diff"`) || !strings.Contains(string(diff), `"newText":"hello\n"`) || !strings.Contains(string(diff), filepath.Join(dir, "notes.txt")) {
		t.Fatalf("the write's permission shows no diff: %s", diff)
	}
	calls := updatesOf(seen, "tool_call")
	if len(calls) != 2 || calls[0]["kind"] != "execute" || calls[1]["kind"] != "edit" {
		t.Fatalf("tool calls: %v", calls)
	}
	if toolStatus(seen, "c1") != "completed" || toolStatus(seen, "c2") != "failed" {
		t.Fatalf("statuses: c1 %s, c2 %s", toolStatus(seen, "c1"), toolStatus(seen, "c2"))
	}
	if _, err := os.Stat(filepath.Join(dir, "one.txt")); err != nil {
		t.Fatal("the allowed command did not run")
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err == nil {
		t.Fatal("the rejected write ran")
	}
	if got := agentText(seen); got != "Making notes.Done." {
		t.Fatalf("answer %q", got)
	}
	if seen["prompt"].(map[string]any)["stopReason"] != "end_turn" {
		t.Fatalf("prompt: %v", seen["prompt"])
	}
	if exitCode(seen) != 0.0 {
		t.Fatalf("exit %v", seen["exit"])
	}
	st := readState(t, dir)
	if !st.Idle() || st.LastFinished.Outcome != session.OutcomeCompleted {
		t.Fatalf("session: idle %v, last %+v", st.Idle(), st.LastFinished)
	}
}

// session/cancel during a command is the Esc path: the abort is durable,
// the command's process group is gone, and the prompt answers cancelled.
func TestSDKClientCancelMidCommand(t *testing.T) {
	pid := pidFile(t)
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: "c1", Name: "bash", Arguments: pidCommand(pid, "")}}},
	)
	dir := t.TempDir()
	began := time.Now()
	seen := sdkClient(t, srv, dir, "cancel", "ACP_PID="+pid)
	if d := time.Since(began); d > 25*time.Second {
		t.Fatalf("the cancel took %v: the command ran to its end", d)
	}
	if seen["prompt"].(map[string]any)["stopReason"] != "cancelled" {
		t.Fatalf("prompt: %v", seen["prompt"])
	}
	if s := toolStatus(seen, "c1"); s != "failed" {
		t.Fatalf("the cancelled command's status is %q", s)
	}
	assertAbortedDurably(t, dir, pid)
}

// The editor goes away mid-command: the operation is aborted durably, the
// process exits, and no command process is left behind.
func TestSDKClientDisconnectMidPrompt(t *testing.T) {
	pid := pidFile(t)
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: "c1", Name: "bash", Arguments: pidCommand(pid, "")}}},
	)
	dir := t.TempDir()
	seen := sdkClient(t, srv, dir, "disconnect", "ACP_PID="+pid)
	if exitCode(seen) != 0.0 {
		t.Fatalf("exit %v", seen["exit"])
	}
	assertAbortedDurably(t, dir, pid)
}

func assertAbortedDurably(t *testing.T, dir, pidPath string) {
	t.Helper()
	b, err := os.ReadFile(pidPath)
	if err != nil {
		t.Fatal(err)
	}
	nsPid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// The command wrote its pid in its own PID namespace (1 there): find
	// it as this process sees it; -1 when it is gone. Never signal -1.
	pid := procs.HostPID(nsPid, dir)
	deadline := time.Now().Add(10 * time.Second)
	for pid > 1 && procs.GroupAlive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			t.Fatal("the command's process group survived")
		}
		time.Sleep(20 * time.Millisecond)
	}
	st := readState(t, dir)
	if !st.Idle() || st.LastFinished.Outcome != session.OutcomeAborted {
		t.Fatalf("session: idle %v, last %+v", st.Idle(), st.LastFinished)
	}
	last := st.Transcript[len(st.Transcript)-1]
	if last.Role != session.RoleTool || *last.Content != session.ContentInterrupted {
		t.Fatalf("last message: %+v", last)
	}
}

// session/load of a session whose process was SIGKILLed mid-command:
// recovery runs first (the command is not run again), then the history is
// replayed, and the session goes on.
func TestSDKClientLoadAfterSIGKILL(t *testing.T) {
	pid := pidFile(t)
	srv := providertest.New(t,
		providertest.Reply{Text: "Deploying.", ToolCalls: []providertest.ToolCall{{ID: "c1", Name: "bash", Arguments: pidCommand(pid, "echo run >> runs.log; ")}}},
		providertest.Reply{Text: "Recovered."},
		providertest.Reply{Text: "All fine."},
	)
	dir := t.TempDir()
	// A one-shot run, killed while its command runs.
	cmd := exec.Command(selfLink(t), "deploy")
	cmd.Dir = dir
	cmd.Env = agentEnv(srv.URL())
	startUntilPid(t, cmd, pid)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if b, _ := os.ReadFile(pid); len(b) > 0 {
		nsPid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		t.Cleanup(func() {
			// Its pid in its own PID namespace (1 there): never signal -1.
			if pid := procs.HostPID(nsPid, dir); pid > 1 {
				_ = syscall.Kill(-pid, syscall.SIGKILL)
			}
		})
	}
	killed := readState(t, dir)
	if killed.Idle() {
		t.Fatal("the killed run left no open operation")
	}
	id := killed.Header.ID

	seen := sdkClient(t, srv, dir, "load", "ACP_SESSION="+id)

	if b, _ := os.ReadFile(filepath.Join(dir, "runs.log")); string(b) != "run\n" {
		t.Fatalf("the command ran again: runs.log %q", b)
	}
	users := updatesOf(seen, "user_message_chunk")
	if len(users) != 1 || users[0]["content"].(map[string]any)["text"] != "deploy" {
		t.Fatalf("replayed user messages: %v", users)
	}
	calls := updatesOf(seen, "tool_call")
	if len(calls) != 1 || calls[0]["toolCallId"] != "c1" || calls[0]["status"] != "failed" || calls[0]["kind"] != "execute" {
		t.Fatalf("replayed tool calls: %v", calls)
	}
	out, _ := json.Marshal(calls[0]["content"])
	if !strings.Contains(string(out), "interrupted") {
		t.Fatalf("the replayed call lacks its interrupted result: %s", out)
	}
	if got := agentText(seen); got != "Deploying.Recovered.All fine." {
		t.Fatalf("answers %q", got)
	}
	if seen["prompt"].(map[string]any)["stopReason"] != "end_turn" {
		t.Fatalf("prompt: %v", seen["prompt"])
	}
	st := readState(t, dir)
	if !st.Idle() || st.LastFinished.Outcome != session.OutcomeCompleted {
		t.Fatalf("session: idle %v, last %+v", st.Idle(), st.LastFinished)
	}
}

// A client that offers fs/read_text_file and fs/write_text_file gets the
// file tools' reads and writes: read sees its (unsaved) buffer, and write
// and edit go through it, not to the disk.
func TestSDKClientFileSystem(t *testing.T) {
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{
			{ID: "c1", Name: "read", Arguments: `{"path":"draft.txt"}`},
			{ID: "c2", Name: "edit", Arguments: `{"path":"draft.txt","edits":[{"oldText":"second","newText":"2nd"}]}`},
			{ID: "c3", Name: "write", Arguments: `{"path":"out.txt","content":"new\n"}`},
		}},
		providertest.Reply{Text: "ok"},
	)
	dir := t.TempDir()
	seen := sdkClient(t, srv, dir, "fs")
	draft := filepath.Join(dir, "draft.txt")
	reads, _ := json.Marshal(seen["reads"])
	if string(reads) != fmt.Sprintf("[%q,%q]", draft, draft) {
		t.Fatalf("reads through the client: %s", reads)
	}
	writes, _ := json.Marshal(seen["writes"])
	want := fmt.Sprintf(`[{"content":"unsaved buffer of %s\n2nd line\n","path":%q},{"content":"new\n","path":%q}]`, draft, draft, filepath.Join(dir, "out.txt"))
	if string(writes) != want {
		t.Fatalf("writes through the client:\n got %s\nwant %s", writes, want)
	}
	for _, name := range []string{"draft.txt", "out.txt"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Fatalf("%s was written to disk, not through the client", name)
		}
	}
	var readResult string
	for _, u := range seen["updates"].([]any) {
		m := u.(map[string]any)
		if m["toolCallId"] == "c1" && m["status"] == "completed" {
			b, _ := json.Marshal(m["content"])
			readResult = string(b)
		}
	}
	if !strings.Contains(readResult, "unsaved buffer of") {
		t.Fatalf("the read's result: %s", readResult)
	}
	for _, id := range []string{"c1", "c2", "c3"} {
		if s := toolStatus(seen, id); s != "completed" {
			t.Fatalf("%s: %s", id, s)
		}
	}
}

// pidFile is where a test's command writes its pid: outside the working
// directory, because a command runs over an overlay of it and its writes
// reach the tree only when it ends (docs/checkpoints.md).
func pidFile(t *testing.T) string { return filepath.Join(t.TempDir(), "pid") }

// pidCommand is bash's arguments: before, then the pid written to path,
// then a long sleep.
func pidCommand(path, before string) string {
	return fmt.Sprintf(`{"command":"%secho $$ > %s; sleep 30"}`, before, path)
}

// startUntilPid starts cmd (a one-shot run) and waits until its command
// has written its pid to pidPath.
func startUntilPid(t *testing.T, cmd *exec.Cmd, pidPath string) {
	t.Helper()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if b, err := os.ReadFile(pidPath); err == nil && len(bytes.TrimSpace(b)) > 0 {
			return
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the command never started: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
