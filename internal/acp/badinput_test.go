package acp_test

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/testenv"
)

// Bad input gets a JSON-RPC error with a clear message, and the connection
// goes on.
func TestBadInputGetsErrors(t *testing.T) {
	p := startAgent(t, providertest.New(t), t.TempDir())

	// Not JSON: a parse error with a null id.
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize",`)
	resp, _ := p.await(-1)
	if resp["id"] != nil || errorCode(t, resp) != -32700 {
		t.Fatalf("malformed JSON: %v", resp)
	}
	// Not a JSON-RPC object.
	p.send(`[1,2,3]`)
	resp, _ = p.await(-1)
	if errorCode(t, resp) != -32600 {
		t.Fatalf("a batch: %v", resp)
	}
	p.send(`{"jsonrpc":"1.0","id":7,"method":"initialize"}`)
	resp, _ = p.await(7)
	if errorCode(t, resp) != -32600 {
		t.Fatalf("jsonrpc 1.0: %v", resp)
	}

	// A request before initialize.
	resp, _ = p.call("session/new", map[string]any{"cwd": p.dir, "mcpServers": []any{}})
	if errorCode(t, resp) != -32600 || !strings.Contains(dump(resp), "initialize") {
		t.Fatalf("session/new before initialize: %v", resp)
	}

	p.initialize()
	// An unknown method.
	resp, _ = p.call("session/fly", map[string]any{})
	if errorCode(t, resp) != -32601 {
		t.Fatalf("unknown method: %v", resp)
	}
	// A prompt to a session that does not exist.
	resp, _ = p.call("session/prompt", map[string]any{"sessionId": "nope", "prompt": []any{map[string]any{"type": "text", "text": "hi"}}})
	if errorCode(t, resp) != -32602 || !strings.Contains(dump(resp), `unknown session \"nope\"`) {
		t.Fatalf("unknown session: %v", resp)
	}
	// Loading a session that does not exist.
	resp, _ = p.call("session/load", map[string]any{"sessionId": "01a23f4a-0340-7657-800a-3caf2619567a", "cwd": p.dir, "mcpServers": []any{}})
	if errorCode(t, resp) != -32602 {
		t.Fatalf("load of a missing session: %v", resp)
	}
	// A relative working directory.
	resp, _ = p.call("session/new", map[string]any{"cwd": "src", "mcpServers": []any{}})
	if errorCode(t, resp) != -32602 || !strings.Contains(dump(resp), "absolute") {
		t.Fatalf("relative cwd: %v", resp)
	}
	// Still alive and well, and a new session announces its commands.
	if id := p.newSession(); id == "" {
		t.Fatal("no session id")
	}
	cmds := p.waitUpdate("available_commands_update")
	if !strings.Contains(dump(cmds), `"name":"compact"`) {
		t.Fatalf("commands: %v", cmds)
	}
}

// Without a model key, initialize names the variable to set as the
// authentication method, and sessions are refused with auth_required.
func TestAuthenticationWhenTheKeyIsMissing(t *testing.T) {
	p := startAgentEnv(t, nil, t.TempDir(), []string{"OPENROUTER_API_KEY=", "TINY_ENDPOINT="})
	init := p.initialize()
	methods, _ := init["authMethods"].([]any)
	if len(methods) != 1 || methods[0].(map[string]any)["id"] != "OPENROUTER_API_KEY" {
		t.Fatalf("authMethods: %v", init["authMethods"])
	}
	resp, _ := p.call("authenticate", map[string]any{"methodId": "OPENROUTER_API_KEY"})
	if errorCode(t, resp) != -32000 || !strings.Contains(dump(resp), "OPENROUTER_API_KEY is not set") {
		t.Fatalf("authenticate: %v", resp)
	}
	resp, _ = p.call("session/new", map[string]any{"cwd": p.dir, "mcpServers": []any{}})
	if errorCode(t, resp) != -32000 {
		t.Fatalf("session/new without a key: %v", resp)
	}
}

// Modes: a session starts in the --approval mode; session/set_mode
// switches it and says so; an unknown mode is refused.
func TestSessionModes(t *testing.T) {
	p := startAgent(t, providertest.New(t), t.TempDir(), "--approval", "auto")
	p.initialize()
	resp, _ := p.call("session/new", map[string]any{"cwd": p.dir, "mcpServers": []any{}})
	res := resp["result"].(map[string]any)
	if mode := res["modes"].(map[string]any)["currentModeId"]; mode != "auto" {
		t.Fatalf("mode %v", mode)
	}
	id := res["sessionId"].(string)
	resp, _ = p.call("session/set_mode", map[string]any{"sessionId": id, "modeId": "ask"})
	if resp["error"] != nil {
		t.Fatalf("set_mode: %v", resp)
	}
	if u := p.waitUpdate("current_mode_update"); u["currentModeId"] != "ask" {
		t.Fatalf("update %v", u)
	}
	resp, _ = p.call("session/set_mode", map[string]any{"sessionId": id, "modeId": "yolo"})
	if errorCode(t, resp) != -32602 {
		t.Fatalf("unknown mode: %v", resp)
	}
}

// A second prompt while one runs is refused; never two operations.
func TestSecondPromptWhileOneRuns(t *testing.T) {
	pid := pidFile(t)
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: "c1", Name: "bash", Arguments: pidCommand(pid, "")}}},
		providertest.Reply{Text: "never asked for"},
	)
	p := startAgent(t, srv, t.TempDir(), "--approval", "auto")
	p.initialize()
	id := p.newSession()
	prompt := map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "deploy"}}}
	first := p.sendCall("session/prompt", prompt)
	waitFile(t, pid)
	resp, _ := p.call("session/prompt", prompt)
	if errorCode(t, resp) != -32600 || !strings.Contains(dump(resp), "already running") {
		t.Fatalf("second prompt: %v", resp)
	}
	p.notify("session/cancel", map[string]any{"sessionId": id})
	resp, _ = p.await(first)
	if resp["result"].(map[string]any)["stopReason"] != "cancelled" {
		t.Fatalf("first prompt: %v", resp)
	}
	st := readState(t, p.dir)
	runs := 0
	for _, m := range st.Transcript {
		if m.Role == session.RoleUser {
			runs++
		}
	}
	if runs != 1 || !st.Idle() {
		t.Fatalf("%d user messages, idle %v", runs, st.Idle())
	}
}

// A 100 MB message is answered with an error naming its id, without the
// memory to hold it, and the connection goes on.
func TestHundredMegabyteMessage(t *testing.T) {
	p := startAgent(t, providertest.New(t), t.TempDir())
	p.initialize()
	base := peakRSS(t, p.cmd.Process.Pid)
	head := `{"jsonrpc":"2.0","id":4242,"method":"session/new","params":{"cwd":"` + p.dir + `","mcpServers":[],"_meta":{"x":"`
	if _, err := io.WriteString(p.stdin, head); err != nil {
		t.Fatal(err)
	}
	chunk := strings.Repeat("a", 1<<20)
	for range 100 {
		if _, err := io.WriteString(p.stdin, chunk); err != nil {
			t.Fatal(err)
		}
	}
	p.send(`"}}}`)
	resp, _ := p.await(4242)
	if errorCode(t, resp) != -32600 || !strings.Contains(dump(resp), "larger than") {
		t.Fatalf("100 MB message: %v", resp)
	}
	// The line is read in pieces: at most MaxMessage (8 MiB) of it is
	// held, never the 100 MB.
	peak := peakRSS(t, p.cmd.Process.Pid)
	t.Logf("peak RSS of tiny-go acp: %d MiB after initialize, %d MiB after a 100 MB message", base>>20, peak>>20)
	limit := int64(24 << 20)
	if testenv.Race {
		limit = 64 << 20 // the race detector shadows every allocation
	}
	if peak-base > limit {
		t.Fatalf("a 100 MB message grew the peak RSS by %d MiB", (peak-base)>>20)
	}
	if id := p.newSession(); id == "" {
		t.Fatal("no session id")
	}
}

// A client that never reads stdout: the agent waits (memory stays
// bounded), and a cancel still ends the operation durably.
func TestClientThatNeverReads(t *testing.T) {
	answer := strings.Repeat("word ", 400_000) // 2 MB in 10-byte pieces
	srv := providertest.New(t, providertest.Reply{Text: answer, ChunkSize: 10})
	p := startAgent(t, srv, t.TempDir(), "--approval", "auto")
	p.initialize()
	id := p.newSession()
	base := peakRSS(t, p.cmd.Process.Pid)
	p.pauseReading()
	p.sendCall("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "talk"}}})
	// Let the pipe and the queue fill.
	time.Sleep(time.Second)
	p.notify("session/cancel", map[string]any{"sessionId": id})
	deadline := time.Now().Add(20 * time.Second)
	for {
		st := readState(t, p.dir)
		if st.Idle() && st.LastFinished.Kind != "" {
			if st.LastFinished.Outcome != session.OutcomeAborted {
				t.Fatalf("the operation ended %s", st.LastFinished.Outcome)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the cancel did not end the operation while the client was not reading")
		}
		time.Sleep(50 * time.Millisecond)
	}
	peak := peakRSS(t, p.cmd.Process.Pid)
	t.Logf("peak RSS of tiny-go acp: %d MiB with a session, %d MiB after streaming 2 MB in 200000 pieces to a client that does not read", base>>20, peak>>20)
	if peak-base > 32<<20 {
		t.Fatalf("the unread updates grew the peak RSS by %d MiB", (peak-base)>>20)
	}
	p.resumeReading()
}

func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if b, err := os.ReadFile(path); err == nil && len(b) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// SIGTERM (the editor stopping the agent) mid-command aborts the operation
// durably, stops the command and exits 0.
func TestSIGTERMMidCommand(t *testing.T) {
	pid := pidFile(t)
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: "c1", Name: "bash", Arguments: pidCommand(pid, "")}}},
	)
	p := startAgent(t, srv, t.TempDir(), "--approval", "auto")
	p.initialize()
	id := p.newSession()
	p.sendCall("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "deploy"}}})
	waitFile(t, pid)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		t.Fatal("tiny-go acp did not exit after SIGTERM")
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit %d", code)
	}
	assertAbortedDurably(t, p.dir, pid)
}

// session/close ends a running operation durably and forgets the session.
func TestSessionCloseMidCommand(t *testing.T) {
	pid := pidFile(t)
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: "c1", Name: "bash", Arguments: pidCommand(pid, "")}}},
	)
	p := startAgent(t, srv, t.TempDir(), "--approval", "auto")
	p.initialize()
	id := p.newSession()
	first := p.sendCall("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "deploy"}}})
	waitFile(t, pid)
	resp, before := p.call("session/close", map[string]any{"sessionId": id})
	if resp["error"] != nil {
		t.Fatalf("close: %v", resp)
	}
	// The prompt was answered before the close.
	var prompt map[string]any
	for _, m := range before {
		if m["id"] == first {
			prompt = m
		}
	}
	if r, _ := prompt["result"].(map[string]any); r["stopReason"] != "cancelled" {
		t.Fatalf("prompt: %v", prompt)
	}
	assertAbortedDurably(t, p.dir, pid)
	resp, _ = p.call("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": "again"}}})
	if errorCode(t, resp) != -32602 {
		t.Fatalf("prompt to a closed session: %v", resp)
	}
}
