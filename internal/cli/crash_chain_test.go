package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tiny-agent/tiny-go/internal/conformance"
	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// chainServer serves a task of 5 bash steps (each appends its number to
// ./effects) whose sixth request is rejected as too long for the window
// until the history was compacted: the run ends context_limit, a
// compaction runs, and the continuation run makes step 5 and answers. The
// replies depend only on the request, so a resumed process is answered
// as the dead one would have been. hang makes the summary request hang.
func chainServer(t *testing.T, hang *atomic.Bool) *providertest.Server {
	lt := &providertest.LongTask{
		Steps:  5,
		Answer: "chain done",
		Call: func(n int) providertest.ToolCall {
			return providertest.ToolCall{Name: "bash", Arguments: fmt.Sprintf(`{"command":"echo %d >> effects"}`, n)}
		},
	}
	overflow := providertest.Reply{Status: 400, Body: `{"error":{"message":"This model's maximum context length is 4096 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`}
	srv := providertest.New(t)
	srv.Respond(func(r providertest.Request) providertest.Reply {
		if len(r.Chat.Tools) == 0 {
			if hang != nil && hang.Load() {
				return providertest.Reply{Hang: true}
			}
			return lt.Reply(r)
		}
		results, compacted := 0, false
		for _, m := range r.Chat.Messages {
			if m.Role == "tool" {
				results++
			}
			if m.Content != nil && strings.HasPrefix(*m.Content, "[Compacted history]") {
				compacted = true
			}
		}
		if results >= 4 && !compacted {
			return overflow
		}
		return lt.Reply(r)
	})
	return srv
}

// checkChainOutcome asserts a resumed chain: idle, the final answer, one
// compaction after a context_limit run, and no bash effect run twice.
func checkChainOutcome(t *testing.T, c *child, data []byte) {
	t.Helper()
	st, corrupt := session.Reduce(data)
	if corrupt != nil {
		t.Fatalf("the resumed session does not reduce: %v", corrupt)
	}
	if !st.Idle() || st.ContinuationOwed {
		t.Fatalf("not finished: idle %v, continuation owed %v", st.Idle(), st.ContinuationOwed)
	}
	if n := len(st.Transcript); n == 0 || st.Transcript[n-1].Content == nil || *st.Transcript[n-1].Content != "chain done" {
		t.Fatal("the task did not finish with its answer")
	}
	if n := bytes.Count(data, []byte(`"type":"compactionStarted"`)); n != 1 {
		t.Fatalf("%d compactions, want 1", n)
	}
	if !bytes.Contains(data, []byte(`"code":"context_limit"`)) || !bytes.Contains(data, []byte(agentContinuePrompt)) {
		t.Fatal("no context_limit run or continuation run")
	}
	effects, _ := os.ReadFile(filepath.Join(c.dir, "effects"))
	seen := map[string]bool{}
	for _, l := range strings.Fields(string(effects)) {
		if seen[l] {
			t.Fatalf("bash step %s ran twice:\n%s", l, effects)
		}
		seen[l] = true
	}
}

const agentContinuePrompt = "Continue the task. The work so far is summarized above."

// resumeTwice resumes the session, checks the outcome, and checks that a
// second resume appends nothing. It reports whether the crashed session
// owed its continuation run, which `session list` must say.
func resumeTwice(t *testing.T, c *child) (owed bool) {
	t.Helper()
	st, corrupt := session.Reduce(mustRead(t, c.sessionFile()))
	if corrupt != nil {
		t.Fatalf("the crashed session does not reduce: %v", corrupt)
	}
	id := st.Header.ID
	if owed = st.Idle() && st.ContinuationOwed; owed {
		list, _, err := c.run("", "session", "list")
		if err != nil || !strings.Contains(list, "idle (continuation owed)") {
			t.Fatalf("session list of a session owing its continuation (err %v):\n%s", err, list)
		}
		asJSON, _, err := c.run("", "session", "list", "--json")
		if err != nil || !strings.Contains(asJSON, `"continuationOwed": true`) {
			t.Fatalf("session list --json of a session owing its continuation (err %v):\n%s", err, asJSON)
		}
	}
	if out, killed, err := c.run("", "--session", id, "--json"); err != nil || killed {
		t.Fatalf("resume: killed=%v err=%v\n%s", killed, err, out)
	}
	final, _ := os.ReadFile(c.sessionFile())
	checkChainOutcome(t, c, final)
	if _, killed, err := c.run("", "--session", id, "--json"); err != nil || killed {
		t.Fatalf("second resume: killed=%v err=%v", killed, err)
	}
	if again, _ := os.ReadFile(c.sessionFile()); !bytes.Equal(again, final) {
		t.Fatalf("the second resume appended %d bytes", len(again)-len(final))
	}
	return owed
}

// The crash matrix over run -> compaction -> continuation: SIGKILL after
// every commit and before every later one, a torn last write, and a kill
// in the middle of the summary request; every kill resumes to the answer.
func TestCrashMatrixCompactionChain(t *testing.T) {
	if testing.Short() {
		t.Skip("crash matrix runs real processes")
	}
	var hang atomic.Bool
	srv := chainServer(t, &hang)

	dry := newChild(t, srv.URL())
	if out, killed, err := dry.run("", "--json", "do the long task"); err != nil || killed {
		t.Fatalf("dry run: killed=%v err=%v\n%s", killed, err, out)
	}
	data, _ := os.ReadFile(dry.sessionFile())
	checkChainOutcome(t, dry, data)
	validateSessionFile(t, data)
	// session show tells the chain as it happened.
	dst, _ := session.Reduce(data)
	show, _, err := dry.run("", "session", "show", dst.Header.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"finished: failed: context_limit: context window full; continuing after compaction", "compaction summary", agentContinuePrompt, "chain done"} {
		if !strings.Contains(show, want) {
			t.Errorf("session show lacks %q:\n%s", want, show)
		}
	}
	n, err := strconv.Atoi(readFile(t, filepath.Join(dry.dir, "commits")))
	if err != nil || n < 25 {
		t.Fatalf("dry run made %d commits (%v)", n, err)
	}
	points := killPoints(n, n)
	owing := 0
	for _, point := range points {
		t.Run(point, func(t *testing.T) {
			c := newChild(t, srv.URL())
			if _, killed, err := c.run(point, "--json", "do the long task"); err != nil || !killed {
				t.Fatalf("the child was not killed at %s: err=%v", point, err)
			}
			if resumeTwice(t, c) {
				owing++
			}
		})
	}
	if owing == 0 {
		t.Error("no kill left a session owing its continuation run")
	}

	t.Run("during the summary request", func(t *testing.T) {
		c := newChild(t, srv.URL())
		hang.Store(true)
		before := len(srv.Requests())
		cmd := c.command("--json", "do the long task")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for !summaryRequested(srv, before) {
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				t.Fatal("no summary request")
			}
			time.Sleep(5 * time.Millisecond)
		}
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		hang.Store(false)
		st, corrupt := session.Reduce(mustRead(t, c.sessionFile()))
		if corrupt != nil || st.Operation == nil || st.Operation.Kind != session.OperationCompaction {
			t.Fatalf("after the kill: %v, %+v", corrupt, st.Operation)
		}
		resumeTwice(t, c)
	})
	t.Logf("crash points covered: %d + a kill during the summary request", len(points))
}

func summaryRequested(srv *providertest.Server, from int) bool {
	reqs := srv.Requests()
	for _, r := range reqs[min(from, len(reqs)):] {
		if r.DecodeError == "" && len(r.Chat.Tools) == 0 {
			return true
		}
	}
	return false
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// command is the child as a process not yet started, without a crash
// point.
func (c *child) command(args ...string) *exec.Cmd {
	cmd := exec.Command(c.bin, args...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(),
		childEnv+"=1",
		"OPENROUTER_API_KEY=test-key",
		"TINY_ENDPOINT="+c.server,
		"TINY_AGENT_ENVIRONMENT_IDENTITY=crash-matrix",
		"OTEL_SDK_DISABLED=true",
	)
	return cmd
}

// validateSessionFile validates every line against the shared
// session.schema.json.
func validateSessionFile(t *testing.T, data []byte) {
	t.Helper()
	sch, err := jsonschema.NewCompiler().Compile(filepath.Join(conformance.Dir(t), "session", "schemas", "session.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(l))
		if err == nil {
			err = sch.Validate(inst)
		}
		if err != nil {
			t.Fatalf("line %d is not valid under session.schema.json: %v", i+1, err)
		}
	}
}
