package acp_test

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/cli"
	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/testenv"
)

// childEnv makes the test binary run tiny-go itself, so the tests drive
// the real program in a real subprocess without a separate build.
const childEnv = "TINY_GO_ACP_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(cli.Program())
	}
	os.Exit(m.Run())
}

// agentProc is `tiny-go acp` in a subprocess, spoken to line by line.
type agentProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	dir    string
	stdin  io.WriteCloser
	lines  chan map[string]any
	stderr *testenv.Buffer
	done   chan struct{}
	gate   sync.Mutex
	// answer is the option id permission requests are answered with;
	// asked collects them.
	answer any
	asked  []map[string]any
	// passed holds the session updates await read past on its way to a
	// response: waitUpdate looks there first, since an update may come
	// before or after the response that caused it.
	passed []map[string]any
}

func (p *agentProc) pauseReading()  { p.gate.Lock() }
func (p *agentProc) resumeReading() { p.gate.Unlock() }

// agentEnv is the environment of a tiny-go child using srv.
func agentEnv(srvURL string) []string {
	return append(os.Environ(), childEnv+"=1",
		"OPENROUTER_API_KEY=test-key",
		"TINY_ENDPOINT="+srvURL,
		"TINY_AGENT_ENVIRONMENT_IDENTITY=acp-test",
		"OTEL_SDK_DISABLED=true",
	)
}

func startAgent(t *testing.T, srv *providertest.Server, dir string, args ...string) *agentProc {
	t.Helper()
	return startAgentEnv(t, srv, dir, nil, args...)
}

// startAgentEnv is startAgent with more environment variables.
func startAgentEnv(t *testing.T, srv *providertest.Server, dir string, env []string, args ...string) *agentProc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "tiny-go")
	if err := os.Symlink(exe, link); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(link, append([]string{"acp"}, args...)...)
	cmd.Dir = dir
	url := "http://127.0.0.1:1"
	if srv != nil {
		url = srv.URL()
	}
	cmd.Env = append(agentEnv(url), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &agentProc{t: t, cmd: cmd, dir: dir, stdin: stdin, lines: make(chan map[string]any, 4096), stderr: &testenv.Buffer{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for {
			// The gate is held while the test plays a client that does
			// not read.
			p.gate.Lock()
			//lint:ignore SA2001 waiting for the gate is the point
			p.gate.Unlock()
			if !sc.Scan() {
				break
			}
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("stdout carries a line that is not JSON: %q", sc.Text())
				continue
			}
			p.lines <- m
		}
	}()
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = stdin.Close()
		select {
		case <-p.done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("agent stderr:\n%s", p.stderr.String())
		}
	})
	return p
}

func (p *agentProc) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.t.Fatalf("write: %v", err)
	}
}

var nextID = 100

// call sends a request and returns its response, collecting the
// notifications before it in notes.
func (p *agentProc) call(method string, params any) (resp map[string]any, notes []map[string]any) {
	p.t.Helper()
	return p.await(p.sendCall(method, params))
}

// sendCall sends a request and returns its id.
func (p *agentProc) sendCall(method string, params any) float64 {
	p.t.Helper()
	nextID++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nextID, "method": method, "params": params})
	p.send(string(b))
	return float64(nextID)
}

func (p *agentProc) notify(method string, params any) {
	p.t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
	p.send(string(b))
}

// await reads up to the response to id; id -1 is a response with a null id.
func (p *agentProc) await(id float64) (resp map[string]any, notes []map[string]any) {
	p.t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case m, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("stdout closed before the answer to %v; stderr:\n%s", id, p.stderr.String())
			}
			if m["method"] == "session/request_permission" && p.answer != nil {
				p.asked = append(p.asked, m["params"].(map[string]any))
				b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m["id"], "result": map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": p.answer}}})
				p.send(string(b))
				continue
			}
			if m["method"] == nil && (m["id"] == id || (id == -1 && m["id"] == nil)) {
				return m, notes
			}
			notes = append(notes, m)
			if m["method"] == "session/update" {
				p.passed = append(p.passed, m)
			}
		case <-timeout:
			p.t.Fatalf("no answer to %v; stderr:\n%s", id, p.stderr.String())
		}
	}
}

func (p *agentProc) initialize() map[string]any {
	p.t.Helper()
	resp, _ := p.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	if resp["error"] != nil {
		p.t.Fatalf("initialize: %v", resp["error"])
	}
	return resp["result"].(map[string]any)
}

func (p *agentProc) newSession() string {
	p.t.Helper()
	resp, _ := p.call("session/new", map[string]any{"cwd": p.dir, "mcpServers": []any{}})
	if resp["error"] != nil {
		p.t.Fatalf("session/new: %v", resp["error"])
	}
	return resp["result"].(map[string]any)["sessionId"].(string)
}

// waitUpdate reads notifications until a session/update of kind.
func (p *agentProc) waitUpdate(kind string) map[string]any {
	p.t.Helper()
	for i, m := range p.passed {
		if u := m["params"].(map[string]any)["update"].(map[string]any); u["sessionUpdate"] == kind {
			p.passed = append(p.passed[:i:i], p.passed[i+1:]...)
			return u
		}
	}
	timeout := time.After(30 * time.Second)
	for {
		select {
		case m, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("stdout closed before a %s update", kind)
			}
			if m["method"] == "session/update" {
				u := m["params"].(map[string]any)["update"].(map[string]any)
				if u["sessionUpdate"] == kind {
					return u
				}
			}
		case <-timeout:
			p.t.Fatalf("no %s update", kind)
		}
	}
}

// answerText joins the agent_message_chunk texts of notes.
func answerText(notes []map[string]any) string {
	var b strings.Builder
	for _, m := range notes {
		if m["method"] != "session/update" {
			continue
		}
		u := m["params"].(map[string]any)["update"].(map[string]any)
		if u["sessionUpdate"] == "agent_message_chunk" {
			b.WriteString(u["content"].(map[string]any)["text"].(string))
		}
	}
	return b.String()
}

func errorCode(t *testing.T, resp map[string]any) float64 {
	t.Helper()
	e, ok := resp["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error in %v", resp)
	}
	return e["code"].(float64)
}

func dump(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
