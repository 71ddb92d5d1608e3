package headless_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// The exact lines the Python SDK writes for query(prompt="hello"): its
// initialize (json.dumps spacing, hooks null), and after the answer to it
// the prompt; then it closes stdin at once (wait_for_result_and_end_input
// without hooks, SDK MCP servers or can_use_tool).
const (
	pyInitialize = `{"type": "control_request", "request_id": "req_1_0a1b2c3d", "request": {"subtype": "initialize", "hooks": null}}` + "\n"
	pyHello      = `{"type": "user", "session_id": "", "message": {"role": "user", "content": "hello"}, "parent_tool_use_id": null}` + "\n"
)

// gatedReply runs arrived when the model request came (the turn is
// running), waits for release, and then gives tiny-go half a second to
// abort the request (it would, if the end of input aborted the turn)
// before it answers.
func gatedReply(arrived func(), release chan struct{}, text string) providertest.Reply {
	return providertest.Reply{Handler: func(w http.ResponseWriter, r *http.Request) {
		arrived()
		<-release
		select {
		case <-r.Context().Done():
			return
		case <-time.After(500 * time.Millisecond):
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"gen-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`, text)
	}}
}

// The Python SDK's query("hello"), byte for byte, with stdin closed while
// the model request is in flight: closed stdin means no more prompts, so
// the turn finishes with the answer and tiny-go exits 0 (it failed about
// 40% of the time when the end of input aborted the turn).
func TestPythonSDKHelloClosesStdinMidTurn(t *testing.T) {
	dir := t.TempDir()
	arrived, release := make(chan struct{}), make(chan struct{})
	srv := providertest.New(t, gatedReply(func() { close(arrived) }, release, "hello back"))
	p := start(t, srv, dir, strings.Fields(streamArgs)...)
	if _, err := io.WriteString(p.stdin, pyInitialize); err != nil {
		t.Fatal(err)
	}
	if r := p.next("control_response"); r["response"].(map[string]any)["subtype"] != "success" {
		t.Fatalf("initialize: %v", r)
	}
	if _, err := io.WriteString(p.stdin, pyHello); err != nil {
		t.Fatal(err)
	}
	<-arrived
	_ = p.stdin.Close()
	close(release)
	r := p.next("result")
	if r["subtype"] != "success" || r["result"] != "hello back" || r["num_turns"] != float64(1) {
		t.Errorf("result = %v; want success with the answer", r)
	}
	p.rest()
	if code := p.exit(); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	_, st := readSession(t, dir)
	if st.LastFinished.Outcome != session.OutcomeCompleted {
		t.Errorf("session: last %v; want a completed run", st.LastFinished)
	}
}

// stdin closed while a command runs, after an initialize: the command
// goes on, the turn finishes, and tiny-go exits 0; a SIGTERM (what the
// SDK sends 2 s after closing stdin) is what aborts a turn.
func TestStdinClosedMidCommandFinishesTheTurn(t *testing.T) {
	dir := t.TempDir()
	waitGo := `{"command":"touch $MARKS/started; until [ -e $MARKS/go ]; do sleep 0.05; done; echo went"}`
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: "call-wait", Name: "bash", Arguments: waitGo}}},
		providertest.Reply{Text: "the command went"},
	)
	p := start(t, srv, dir, append(strings.Fields(streamArgs), "--permission-mode=bypassPermissions")...)
	p.send(initialize)
	p.send(userLine("run the command"))
	marks := marksOf(t, dir)
	waitFile(t, filepath.Join(marks, "started"))
	_ = p.stdin.Close()
	// Nothing on stdout tells when tiny-go read the end of input; the
	// session does not either. The command runs until told, so whichever
	// comes first, the end of input is seen while the turn runs.
	if err := os.WriteFile(filepath.Join(marks, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r := p.next("result")
	if r["subtype"] != "success" || r["result"] != "the command went" {
		t.Errorf("result = %v; want success", r)
	}
	p.rest()
	if code := p.exit(); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	_, st := readSession(t, dir)
	if st.Operation != nil || st.LastFinished.Outcome != session.OutcomeCompleted {
		t.Errorf("session: operation %v, last %v; want a completed run", st.Operation, st.LastFinished)
	}
}

// SIGTERM while a command runs after stdin closed: a durable abort.
func TestStdinClosedThenSIGTERMAborts(t *testing.T) {
	dir := t.TempDir()
	srv := providertest.New(t, providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: "call-long", Name: "bash", Arguments: longCommand}}})
	p := start(t, srv, dir, append(strings.Fields(streamArgs), "--permission-mode=bypassPermissions")...)
	p.send(initialize)
	p.send(userLine("run the long command"))
	waitFile(t, filepath.Join(marksOf(t, dir), "sleep.pid"))
	_ = p.stdin.Close()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	r := p.next("result")
	if r["subtype"] != "error_during_execution" || r["is_error"] != true {
		t.Errorf("result = %v", r)
	}
	p.rest()
	p.exit()
	noneLeft(t, dir)
	_, st := readSession(t, dir)
	if st.Operation != nil || st.LastFinished.Outcome != session.OutcomeAborted {
		t.Errorf("session: operation %v, last %v; want an aborted run", st.Operation, st.LastFinished)
	}
}
