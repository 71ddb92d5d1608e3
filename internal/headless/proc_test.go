package headless_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/testenv"
)

// These tests speak the protocol to the real binary line by line, for
// what the SDK cannot be made to send (a raw malformed line, piped input
// without an SDK) and for flags the SDK passes.

type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	lines  chan map[string]any
	stderr *testenv.Buffer
}

func start(t *testing.T, srv *providertest.Server, dir string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(selfLink(t), args...)
	cmd.Dir = dir
	cmd.Env = append(env(srv.URL()), "MARKS="+marksOf(t, dir))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, cmd: cmd, stdin: stdin, stdout: stdout, lines: make(chan map[string]any, 1024), stderr: &testenv.Buffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("stdout carries a line that is not JSON: %q", sc.Text())
				continue
			}
			p.lines <- m
		}
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		_, _ = p.cmd.Process.Wait()
		if t.Failed() {
			t.Logf("tiny-go stderr:\n%s", p.stderr.String())
		}
	})
	return p
}

func (p *proc) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

// next is the next output line of type typ, skipping others.
func (p *proc) next(typ string) map[string]any {
	p.t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case m, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("stdout ended before a %s message", typ)
			}
			if m["type"] == typ {
				return m
			}
		case <-timeout:
			p.t.Fatalf("no %s message", typ)
		}
	}
}

// rest is every output line up to the end of stdout.
func (p *proc) rest() []map[string]any {
	var out []map[string]any
	for m := range p.lines {
		out = append(out, m)
	}
	return out
}

// exit waits for the process and returns its exit code.
func (p *proc) exit() int {
	p.t.Helper()
	err := p.cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		p.t.Fatal(err)
	}
	return 0
}

const (
	initialize = `{"type":"control_request","request_id":"init-1","request":{"subtype":"initialize","systemPrompt":[""]}}`
	streamArgs = "-p --input-format stream-json --output-format stream-json --verbose"
)

func userLine(text string) string {
	b, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text}, "parent_tool_use_id": nil, "session_id": ""})
	return string(b)
}

func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Piped input without an SDK (`cat prompts.jsonl | tiny-go -p ...`) is a
// list of prompts: the end of input lets every one of them run.
func TestPipedPromptsAllRun(t *testing.T) {
	dir := t.TempDir()
	srv := providertest.New(t, providertest.Reply{Text: "one"}, providertest.Reply{Text: "two"})
	p := start(t, srv, dir, strings.Fields(streamArgs)...)
	p.send(userLine("first"))
	p.send(userLine("second"))
	_ = p.stdin.Close()
	var results []string
	for _, m := range p.rest() {
		if m["type"] == "result" {
			results = append(results, m["result"].(string))
		}
	}
	if code := p.exit(); code != 0 || strings.Join(results, ",") != "one,two" {
		t.Fatalf("exit %d, results %q; want 0 and one,two", code, results)
	}
}

// A malformed line while a run is going: the run is aborted durably,
// exactly one error result names the line, and tiny-go exits 1 with
// nothing left running and the session resumable.
func TestMalformedLineMidRun(t *testing.T) {
	dir := t.TempDir()
	srv := providertest.New(t, providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: "call-long", Name: "bash", Arguments: longCommand}}})
	p := start(t, srv, dir, append(strings.Fields(streamArgs), "--permission-mode=bypassPermissions")...)
	p.send(initialize)
	p.send(userLine("run the long command"))
	waitFile(t, filepath.Join(marksOf(t, dir), "sleep.pid"))
	p.send(`{"type":"user","message":`)
	var results []map[string]any
	for _, m := range p.rest() {
		if m["type"] == "result" {
			results = append(results, m)
		}
	}
	if code := p.exit(); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if len(results) != 1 || results[0]["is_error"] != true || !strings.Contains(results[0]["errors"].([]any)[0].(string), "input line 3") {
		t.Fatalf("results = %v; want one error naming line 3", results)
	}
	noneLeft(t, dir)
	_, st := readSession(t, dir)
	if st.Operation != nil || st.LastFinished.Outcome != session.OutcomeAborted {
		t.Errorf("session: operation %v, last %v; want an aborted run", st.Operation, st.LastFinished)
	}
}

// Flags tiny-go has no use for are accepted with one warning line; json
// output is the result message alone.
func TestIgnoredFlagsAndJSONOutput(t *testing.T) {
	dir := t.TempDir()
	srv := providertest.New(t, providertest.Reply{Text: "fine"})
	cmd := exec.Command(selfLink(t), "-p", "--output-format=json", "--thinking=adaptive", "--setting-sources=user,project",
		"--mcp-config", `{"mcpServers":{}}`, "--strict-mcp-config", "--max-turns=3", "--verbose", "hello")
	cmd.Dir, cmd.Env = dir, env(srv.URL())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "--thinking") || !strings.Contains(lines[0], "--setting-sources") || !strings.Contains(lines[0], "--mcp-config") {
		t.Errorf("stderr = %q; want one warning line naming the ignored flags", stderr.String())
	}
	var r map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil || r["type"] != "result" || r["result"] != "fine" {
		t.Fatalf("stdout = %q (%v); want the result message alone", stdout.String(), err)
	}
}

// Text output is the answer; an error result exits 1.
func TestTextOutput(t *testing.T) {
	dir := t.TempDir()
	srv := providertest.New(t, providertest.Reply{Text: "the answer"})
	cmd := exec.Command(selfLink(t), "-p", "question")
	cmd.Dir, cmd.Env = dir, env(srv.URL())
	out, err := cmd.Output()
	if err != nil || string(out) != "the answer\n" {
		t.Fatalf("stdout %q, %v", out, err)
	}
	// The prompt may come on stdin.
	srv.Enqueue(providertest.Reply{Text: "piped answer"})
	cmd = exec.Command(selfLink(t), "-p")
	cmd.Dir, cmd.Env, cmd.Stdin = dir, env(srv.URL()), strings.NewReader("a piped question\n")
	out, err = cmd.Output()
	if err != nil || string(out) != "piped answer\n" || !strings.Contains(string(srv.Requests()[1].Body), "a piped question") {
		t.Fatalf("stdout %q, %v", out, err)
	}
}

// Without a permission prompt tool the mode and the rules decide:
// --allowedTools lets matching commands run, the others are denied with
// a message the model sees, and --max-turns stops the run.
func TestAllowedToolsAndMaxTurns(t *testing.T) {
	dir := t.TempDir()
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{
			{ID: "c1", Name: "bash", Arguments: `{"command":"echo hi > allowed.txt"}`},
			{ID: "c2", Name: "bash", Arguments: `{"command":"touch denied.txt"}`},
		}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: "c3", Name: "bash", Arguments: `{"command":"echo again >> allowed.txt"}`}}},
		providertest.Reply{Text: "never reached"},
	)
	cmd := exec.Command(selfLink(t), "-p", "--output-format=json", "--allowedTools=Bash(echo:*)", "--max-turns=2", "go")
	cmd.Dir, cmd.Env = dir, env(srv.URL())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v; want 1 for error_max_turns\n%s", err, stderr.String())
	}
	var r map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil || r["subtype"] != "error_max_turns" || r["num_turns"] != 3.0 {
		t.Fatalf("result %q (%v); want error_max_turns with num_turns 3, as Claude Code's", stdout.String(), err)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d model requests, want 2", n)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "allowed.txt")); string(b) != "hi\nagain\n" {
		t.Errorf("allowed.txt = %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "denied.txt")); !os.IsNotExist(err) {
		t.Errorf("the command --allowedTools does not allow ran")
	}
	if d := r["permission_denials"].([]any); len(d) != 1 || d[0].(map[string]any)["tool_name"] != "Bash" {
		t.Errorf("permission_denials = %v", d)
	}
	if body := string(srv.Requests()[1].Body); !strings.Contains(body, "--allowedTools") {
		t.Errorf("the model was not told why the call was denied: %s", body)
	}
}

// set_model applies to the next run; an image block reaches the model.
func TestSetModelAndImage(t *testing.T) {
	dir := t.TempDir()
	srv := providertest.New(t, providertest.Reply{Text: "a red square"})
	p := start(t, srv, dir, strings.Fields(streamArgs)...)
	p.send(initialize)
	p.send(`{"type":"control_request","request_id":"m1","request":{"subtype":"set_model","model":"other/model-2"}}`)
	p.send(`{"type":"control_request","request_id":"x1","request":{"subtype":"no_such_request"}}`)
	var img bytes.Buffer
	rgba := image.NewRGBA(image.Rect(0, 0, 4, 4))
	for i := range 16 {
		rgba.Set(i%4, i/4, color.RGBA{R: 255, A: 255})
	}
	_ = png.Encode(&img, rgba)
	msg, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "text", "text": "what is this?"},
		map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": base64.StdEncoding.EncodeToString(img.Bytes())}},
	}}})
	p.send(string(msg))
	_ = p.stdin.Close()
	var r map[string]any
	responses := map[string]map[string]any{}
	for _, m := range p.rest() {
		switch m["type"] {
		case "result":
			r = m
		case "control_response":
			resp := m["response"].(map[string]any)
			responses[resp["request_id"].(string)] = resp
		}
	}
	if code := p.exit(); code != 0 || r["result"] != "a red square" {
		t.Fatalf("exit %d, result %v", code, r)
	}
	if responses["m1"]["subtype"] != "success" || responses["x1"]["subtype"] != "error" || !strings.Contains(responses["x1"]["error"].(string), "no_such_request") {
		t.Errorf("control responses = %v", responses)
	}
	req := srv.Requests()[0]
	if req.Chat.Model != "other/model-2" {
		t.Errorf("the run used model %q; want the one set_model chose", req.Chat.Model)
	}
	if !strings.Contains(string(req.Body), "data:image/png;base64,") {
		t.Errorf("the image did not reach the model: %.400s", req.Body)
	}
}

// --tools picks the built-in tools offered (Claude Code's names), and a
// bare --disallowedTools name removes one: the model is offered only
// those, and system/init lists only those.
func TestToolsAndDisallowedTools(t *testing.T) {
	dir := t.TempDir()
	srv := providertest.New(t, providertest.Reply{Text: "ok"})
	cmd := exec.Command(selfLink(t), "-p", "--output-format=stream-json", "--verbose", "--tools=Read,Edit,Bash", "--disallowedTools=Bash", "hi")
	cmd.Dir, cmd.Env = dir, env(srv.URL())
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var init map[string]any
	_ = json.Unmarshal([]byte(strings.SplitN(string(out), "\n", 2)[0]), &init)
	if got := jsonOf(init["tools"]); got != `["Read","Edit"]` {
		t.Errorf("init tools = %s", got)
	}
	var offered []string
	for _, tl := range srv.Requests()[0].Chat.Tools {
		offered = append(offered, tl.Function.Name)
	}
	if strings.Join(offered, ",") != "read,edit" {
		t.Errorf("the model was offered %v", offered)
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// --system-prompt-file replaces tiny-go's system prompt and
// --append-system-prompt extends it (the Python SDK's flags).
func TestSystemPromptFlags(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "sys.txt"), []byte("Be terse.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := providertest.New(t, providertest.Reply{Text: "ok"})
	cmd := exec.Command(selfLink(t), "-p", "--system-prompt-file", "sys.txt", "--append-system-prompt", "Use British spelling.", "hi")
	cmd.Dir, cmd.Env = dir, env(srv.URL())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	sys := srv.Requests()[0].Chat.Messages[0]
	if sys.Content == nil || *sys.Content != "Be terse.\n\nUse British spelling." {
		t.Fatalf("system message = %+v", sys)
	}
}

// The reader of tiny-go's output going away (the host process died) while
// a command runs is a durable abort too, even with stdin still open and
// nothing to write yet: the pipe's write end reports it.
func TestOutputClosedMidRunAborts(t *testing.T) {
	dir := t.TempDir()
	srv := providertest.New(t, providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: "call-long", Name: "bash", Arguments: longCommand}}})
	p := start(t, srv, dir, append(strings.Fields(streamArgs), "--permission-mode=bypassPermissions")...)
	p.send(userLine("run the long command"))
	waitFile(t, filepath.Join(marksOf(t, dir), "sleep.pid"))
	_ = p.stdout.Close()
	if code := p.exit(); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	noneLeft(t, dir)
	_, st := readSession(t, dir)
	if st.Operation != nil || st.LastFinished.Outcome != session.OutcomeAborted {
		t.Errorf("session: operation %v, last %v; want an aborted run", st.Operation, st.LastFinished)
	}
	if !strings.Contains(p.stderr.String(), "the output was closed") {
		t.Errorf("stderr = %q", p.stderr.String())
	}
}

// TodoWrite or Task in --tools brings the agent tools; a deny of either
// leaves them out.
func TestToolsNameTheAgentTools(t *testing.T) {
	for _, tc := range []struct{ flags, want string }{
		{"--tools=Read,TodoWrite", "read,todo_write,task"},
		{"--disallowedTools=Task", "bash,read,write,edit,bg,diagnostics,web_fetch"},
		{"--disallowedTools=Task,WebFetch", "bash,read,write,edit,bg,diagnostics"},
		{"--tools=Read,WebFetch", "read,web_fetch"},
		{"--tools=Read,Edit,diagnostics", "read,edit,diagnostics"},
	} {
		srv := providertest.New(t, providertest.Reply{Text: "ok"})
		cmd := exec.Command(selfLink(t), "-p", tc.flags, "hi")
		cmd.Dir, cmd.Env = t.TempDir(), env(srv.URL())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", tc.flags, err, out)
		}
		var offered []string
		for _, tl := range srv.Requests()[0].Chat.Tools {
			offered = append(offered, tl.Function.Name)
		}
		if got := strings.Join(offered, ","); got != tc.want {
			t.Errorf("%s: offered %s, want %s", tc.flags, got, tc.want)
		}
	}
}
