package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/cli/assemble"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// The crash matrix: a real child process runs a multi-step scenario and is
// killed with SIGKILL at a commit boundary; a fresh process resumes it.
//
// The child is this test binary, started as "tiny-go-crash" (see TestMain),
// which runs the real CLI with a session log that kills the process with
// SIGKILL when commit number TINY_CRASH_AT is reached: "after:N" right after
// commit N is durable, "before:N" right before commit N is written (so the
// effect before it has happened), "torn:N" after writing half of a line for
// commit N.

const crashEnv = "TINY_CRASH_AT"

func init() { scriptCommands["tiny-go-crash"] = crashChildMain }

// crashChildMain is the child's main.
func crashChildMain() {
	at := os.Getenv(crashEnv)
	hooks := &assemble.TestHooks{WrapLog: func(l agent.Log) agent.Log {
		if at == "" {
			return &countingLog{Log: l}
		}
		mode, n, _ := strings.Cut(at, ":")
		k, err := strconv.Atoi(n)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bad", crashEnv, at)
			os.Exit(100)
		}
		return &killLog{Log: l, mode: mode, at: k}
	}}
	os.Exit(mainWithHooks(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv, hooks))
}

// countingLog reports the number of commits on stderr at exit via
// TINY_CRASH_COUNT_FILE, so the parent knows how many boundaries exist.
type countingLog struct {
	agent.Log
	n int
}

func (c *countingLog) Commit(ctx context.Context, facts []session.Fact) ([]session.Fact, error) {
	c.n++
	if f := os.Getenv("TINY_CRASH_COUNT_FILE"); f != "" {
		_ = os.WriteFile(f, []byte(strconv.Itoa(c.n)), 0o600)
	}
	return c.Log.Commit(ctx, facts)
}

type killLog struct {
	agent.Log
	mode string
	at   int
	n    int
}

func (k *killLog) Commit(ctx context.Context, facts []session.Fact) ([]session.Fact, error) {
	k.n++
	if k.n == k.at {
		switch k.mode {
		case "before":
			die()
		case "torn":
			tearTail(k.Log, facts)
			die()
		}
	}
	out, err := k.Log.Commit(ctx, facts)
	if k.n == k.at && k.mode == "after" {
		die()
	}
	return out, err
}

func die() {
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

// tearTail appends the first half of the transaction's encoding without its
// LF, as a write cut short by the crash would leave it.
func tearTail(l agent.Log, facts []session.Fact) {
	s, ok := l.(*store.Store)
	if !ok {
		return
	}
	line, err := session.EncodeTransaction(facts)
	if err != nil || len(line) < 2 {
		line = []byte(`{"kind":"entry","seq":`)
	}
	f, err := os.OpenFile(s.Path(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return
	}
	_, _ = f.Write(line[:len(line)/2])
	_ = f.Close()
}

// scenarioServer answers by counting the tool results in the request, so a
// resumed process gets the same reply for the same conversation:
// read, then bash appending to a marker, then write, then a reply with two
// calls (bash + read), then the final answer.
func scenarioServer(t *testing.T) *httptest.Server {
	steps := []string{
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{\"path\":\"data.txt\"}"}}]}`,
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c2","type":"function","function":{"name":"bash","arguments":"{\"command\":\"echo one >> marker1\"}"}}]}`,
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c3","type":"function","function":{"name":"write","arguments":"{\"path\":\"out.txt\",\"content\":\"written\\n\"}"}}]}`,
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c4","type":"function","function":{"name":"bash","arguments":"{\"command\":\"echo two >> marker2\"}"}},{"id":"c5","type":"function","function":{"name":"read","arguments":"{\"path\":\"data.txt\"}"}}]}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct {
				Role string `json:"role"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		tools := 0
		for _, m := range req.Messages {
			if m.Role == "tool" {
				tools++
			}
		}
		msg, finish := `{"role":"assistant","content":"done"}`, "stop"
		idx := map[int]int{0: 0, 1: 1, 2: 2, 3: 3}
		if i, ok := idx[tools]; ok {
			msg, finish = steps[i], "tool_calls"
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":%s,"finish_reason":%q}],"usage":{"prompt_tokens":10,"completion_tokens":2}}`, msg, finish)
	}))
	t.Cleanup(srv.Close)
	return srv
}

type child struct {
	t      *testing.T
	bin    string
	dir    string
	server string
}

func (c *child) run(crashAt string, args ...string) (stdout string, killed bool, err error) {
	cmd := exec.Command(c.bin, args...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(),
		childEnv+"=1",
		"OPENROUTER_API_KEY=test-key",
		"TINY_ENDPOINT="+c.server,
		"TINY_AGENT_ENVIRONMENT_IDENTITY=crash-matrix",
		"OTEL_SDK_DISABLED=true",
		crashEnv+"="+crashAt,
		"TINY_CRASH_COUNT_FILE="+filepath.Join(c.dir, "commits"),
	)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return out.String(), true, nil
		}
	}
	if err != nil {
		err = fmt.Errorf("%v: %s", err, errb.String())
	}
	return out.String(), false, err
}

func newChild(t *testing.T, server string) *child {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "data.txt"), []byte("alpha\nbeta\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return &child{t: t, bin: programAs(t, "tiny-go-crash"), dir: dir, server: server}
}

func (c *child) sessionFile() string {
	c.t.Helper()
	m, _ := filepath.Glob(filepath.Join(c.dir, ".tiny-agent", "sessions", "*.jsonl"))
	if len(m) != 1 {
		c.t.Fatalf("%d session files", len(m))
	}
	return m[0]
}

func lines(t *testing.T, path string) int {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// pendingSafeRead reports whether the state has a started read without a
// result: the only case in which resume may run a tool again.
func pendingSafeRead(st *session.State) bool {
	if st.Operation == nil || st.Operation.AbortRequested {
		return false
	}
	for _, tc := range st.Operation.ToolCalls {
		if tc.Status == session.ToolPending && tc.ToolName == "read" {
			return true
		}
	}
	return false
}

func TestCrashMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("crash matrix runs real processes")
	}
	srv := scenarioServer(t)

	// A run without crashes counts the commit boundaries.
	dry := newChild(t, srv.URL+"/v1")
	if _, killed, err := dry.run("", "do the scenario"); err != nil || killed {
		t.Fatalf("dry run: killed=%v err=%v", killed, err)
	}
	n, err := strconv.Atoi(readFile(t, filepath.Join(dry.dir, "commits")))
	if err != nil || n < 15 {
		t.Fatalf("dry run made %d commits (%v)", n, err)
	}
	points := killPoints(n, n/2, n)

	for _, point := range points {
		t.Run(point, func(t *testing.T) {
			c := newChild(t, srv.URL+"/v1")
			if _, killed, err := c.run(point, "do the scenario"); err != nil || !killed {
				t.Fatalf("the child was not killed at %s: err=%v", point, err)
			}
			crashed, _ := os.ReadFile(c.sessionFile())
			st, corrupt := session.Reduce(crashed)
			if corrupt != nil {
				t.Fatalf("the crashed session does not reduce: %v", corrupt)
			}
			wantReplay := pendingSafeRead(st)
			id := st.Header.ID

			out, killed, err := c.run("", "--session", id, "--json")
			if err != nil || killed {
				t.Fatalf("resume: killed=%v err=%v\n%s", killed, err, out)
			}
			replays := 0
			admitted := map[string]bool{}
			sc := bufio.NewScanner(strings.NewReader(out))
			for sc.Scan() {
				var ev map[string]any
				if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
					t.Fatalf("stdout is not JSON Lines: %q", sc.Text())
				}
				// A replay is a start without a new toolStarted (admission)
				// in this process.
				switch ev["type"] {
				case "tool.admitted":
					admitted[ev["toolStartedId"].(string)] = true
				case "tool.started":
					if !admitted[ev["toolStartedId"].(string)] {
						if ev["tool"] != "read" {
							t.Fatalf("%v was replayed", ev["tool"])
						}
						replays++
					}
				}
			}
			final, _ := os.ReadFile(c.sessionFile())
			st, corrupt = session.Reduce(final)
			if corrupt != nil {
				t.Fatalf("the resumed session does not reduce: %v", corrupt)
			}
			if !st.Idle() {
				t.Fatal("the run is still open after resume")
			}
			if got := len(st.Transcript); got == 0 || *st.Transcript[got-1].Content != "done" {
				t.Fatalf("the run did not finish with the final answer")
			}
			if m1, m2 := lines(t, filepath.Join(c.dir, "marker1")), lines(t, filepath.Join(c.dir, "marker2")); m1 > 1 || m2 > 1 {
				t.Fatalf("a bash effect was repeated: marker1=%d marker2=%d lines", m1, m2)
			}
			if (replays == 1) != wantReplay || replays > 1 {
				t.Fatalf("read replayed %d times; a pending safe read = %v", replays, wantReplay)
			}
			// A second resume appends nothing.
			if _, killed, err := c.run("", "--session", id, "--json"); err != nil || killed {
				t.Fatalf("second resume: killed=%v err=%v", killed, err)
			}
			again, _ := os.ReadFile(c.sessionFile())
			if !bytes.Equal(again, final) {
				t.Fatalf("the second resume appended %d bytes", len(again)-len(final))
			}
		})
	}
	t.Logf("crash points covered: %d (after each of %d commits, before each later one, and 2 torn writes)", len(points), n)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// killPoints are the crash points of a run of n commits: after each
// commit, before each but the first, and a torn write of each commit in
// torn.
func killPoints(n int, torn ...int) []string {
	var points []string
	for i := 1; i <= n; i++ {
		points = append(points, fmt.Sprintf("after:%d", i))
		if i > 1 {
			points = append(points, fmt.Sprintf("before:%d", i))
		}
	}
	for _, i := range torn {
		points = append(points, fmt.Sprintf("torn:%d", i))
	}
	return points
}
