package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/procs"
	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"

	"github.com/tiny-agent/tiny-go/internal/testenv"
)

// cliRun runs tiny-go in-process with a scripted provider and returns the
// exit code and output.
type cliRun struct {
	t   *testing.T
	dir string
	env map[string]string
}

func newCLI(t *testing.T, server *providertest.Server) *cliRun {
	env := map[string]string{
		"OPENROUTER_API_KEY": "test-key",
		"OTEL_SDK_DISABLED":  "true",
	}
	if server != nil {
		env["TINY_ENDPOINT"] = server.URL()
	}
	// The temporary directory the tests use (t.TempDir) is the one
	// tiny-go grants commands, as for a user whose TMPDIR is set.
	if tmp := os.Getenv("TMPDIR"); tmp != "" {
		env["TMPDIR"] = tmp
	}
	// Where users keep projects, not under TMPDIR (testenv.WorkDir).
	return &cliRun{t: t, dir: testenv.WorkDir(t), env: env}
}

func (c *cliRun) main(stdin string, args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = Main(append([]string{"--cwd", c.dir}, args...), strings.NewReader(stdin), &out, &errb, func(k string) string { return c.env[k] })
	return code, out.String(), errb.String()
}

func (c *cliRun) sessions() []string {
	m, _ := filepath.Glob(filepath.Join(c.dir, ".tiny-agent", "sessions", "*.jsonl"))
	return m
}

func (c *cliRun) state() *session.State {
	c.t.Helper()
	files := c.sessions()
	if len(files) != 1 {
		c.t.Fatalf("%d session files", len(files))
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		c.t.Fatal(err)
	}
	st, corrupt := session.Reduce(b)
	if corrupt != nil {
		c.t.Fatalf("session does not reduce: %v", corrupt)
	}
	return st
}

func (c *cliRun) write(name, content string) {
	c.t.Helper()
	p := filepath.Join(c.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		c.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		c.t.Fatal(err)
	}
}

func toolCall(id, name, args string) providertest.ToolCall {
	return providertest.ToolCall{ID: id, Name: name, Arguments: args}
}

func TestOneShotRun(t *testing.T) {
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "read", `{"path":"a.txt"}`)}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c2", "bash", `{"command":"echo hi > b.txt"}`)}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c3", "write", `{"path":"c.txt","content":"x\n"}`)}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c4", "edit", `{"path":"c.txt","edits":[{"oldText":"x","newText":"y"}]}`)}},
		providertest.Reply{Text: "Finished."},
	)
	c := newCLI(t, srv)
	c.write("a.txt", "hello\n")
	code, stdout, stderr := c.main("", "fix", "it", "--", "--not-a-flag")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if stdout != "Finished.\n" {
		t.Fatalf("stdout = %q", stdout)
	}
	for _, want := range []string{"◆ read a.txt", "◆ bash echo hi > b.txt", "◆ write c.txt", "◆ edit c.txt", "└ ok", "Resume: tiny-go --session "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(c.dir, "c.txt")); string(b) != "y\n" {
		t.Fatalf("c.txt = %q", b)
	}
	if got := *c.state().Transcript[0].Content; got != "fix it --not-a-flag" {
		t.Fatalf("prompt = %q: a flag-like word after -- belongs to the prompt", got)
	}
}

func TestSystemPromptCarriesAgentsAndSkills(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Text: "ok"}, providertest.Reply{Text: "ok"})
	c := newCLI(t, srv)
	c.write("AGENTS.md", "Always run the tests with -race.\n")
	c.write(".tiny-agent/skills/deploy/SKILL.md", "---\nname: deploy\ndescription: Ship it safely\n---\nSteps: build, test, ship.\n")
	c.write("extra/SKILL.md", "---\nname: \"review\"\r\ndescription: Review a change\r\n---\nLook hard.\n")
	if code, _, stderr := c.main("", "--skill", filepath.Join(c.dir, "extra/SKILL.md"), "hello"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	system := *srv.Requests()[0].Chat.Messages[0].Content
	for _, want := range []string{"Always run the tests with -race.", "<project_instructions path=\"" + filepath.Join(c.dir, "AGENTS.md") + "\">", "<name>deploy</name>", "<description>Ship it safely</description>", "<name>review</name>"} {
		if !strings.Contains(system, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}
	if strings.Contains(system, "Steps: build") {
		t.Error("a skill body was inlined")
	}
	// /skill: as a one-shot prompt sends the skill file with the text.
	code, _, stderr := c.main("", "/skill:deploy", "to staging")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	msgs := srv.Requests()[1].Chat.Messages
	user := *msgs[len(msgs)-1].Content
	if !strings.Contains(user, "Steps: build, test, ship.") || !strings.HasSuffix(user, "\n\nUser: to staging") {
		t.Fatalf("skill message = %q", user)
	}
	code, _, stderr = c.main("", "/skill:nope", "x")
	if code == 0 || !strings.Contains(stderr, "Unknown skill: nope") {
		t.Fatalf("unknown skill: exit %d, %s", code, stderr)
	}
}

func TestStartupErrorsCreateNoSession(t *testing.T) {
	srv := providertest.New(t)
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want string
		code int
	}{
		{"unknown plugin", nil, []string{"--plugin", "bash,nope", "hi"}, "Unknown plugin: nope. Available plugins: bash, read, write, edit, bg", 2},
		{"missing key", map[string]string{"OPENROUTER_API_KEY": "", "TINY_ENDPOINT": ""}, []string{"hi"}, "OPENROUTER_API_KEY", 2},
		{"mcp without catalog", nil, []string{"--mcp", "docs", "hi"}, "no MCP servers are configured", 2},
		{"json without prompt", nil, []string{"--json"}, "--json requires a one-shot prompt.", 2},
		{"unknown session", nil, []string{"--session", "01890000-0000-7000-8000-000000000000", "hi"}, "01890000-0000-7000-8000-000000000000", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newCLI(t, srv)
			for k, v := range tc.env {
				c.env[k] = v
			}
			code, stdout, stderr := c.main("", tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, stderr, tc.code, tc.want)
			}
			if strings.Count(strings.TrimSpace(stderr), "\n") != 0 || strings.Contains(stderr, "goroutine") {
				t.Fatalf("error is not one line: %q", stderr)
			}
			if stdout != "" || len(c.sessions()) != 0 {
				t.Fatalf("stdout %q, %d session files", stdout, len(c.sessions()))
			}
		})
	}
	t.Run("missing key names TINY_ENDPOINT", func(t *testing.T) {
		c := newCLI(t, srv)
		c.env["OPENROUTER_API_KEY"] = ""
		c.env["TINY_ENDPOINT"] = "https://openrouter.ai/api/v1"
		if _, _, stderr := c.main("", "hi"); !strings.Contains(stderr, "TINY_ENDPOINT") {
			t.Fatalf("stderr %q", stderr)
		}
	})
}

// events decodes --json stdout, failing on any line that is not an event.
func events(t *testing.T, stdout string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("stdout line is not JSON: %q", sc.Text())
		}
		if _, err := time.Parse(time.RFC3339, ev["timestamp"].(string)); err != nil {
			t.Fatalf("timestamp %v: %v", ev["timestamp"], err)
		}
		out = append(out, ev)
	}
	return out
}

func names(evs []map[string]any) string {
	var n []string
	for _, e := range evs {
		n = append(n, e["type"].(string))
	}
	return strings.Join(n, " ")
}

func TestJSONEvents(t *testing.T) {
	t.Run("run with one read", func(t *testing.T) {
		srv := providertest.New(t,
			providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "read", `{"path":"a.txt"}`)}, Usage: &providertest.Usage{PromptTokens: 30, CompletionTokens: 4}},
			providertest.Reply{Text: "secret answer", Usage: &providertest.Usage{PromptTokens: 50, CompletionTokens: 6}},
		)
		c := newCLI(t, srv)
		c.write("a.txt", "private file contents\n")
		code, stdout, stderr := c.main("", "--json", "read a private prompt")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		evs := events(t, stdout)
		want := "startup.started session.attached startup.completed operation.started model.started model.completed tool.admitted tool.started tool.completed model.started model.completed operation.completed"
		if got := names(evs); got != want {
			t.Fatalf("events:\n got %s\nwant %s", got, want)
		}
		if evs[0]["runtime"] != "go" {
			t.Fatalf("startup.started: %v", evs[0])
		}
		last := evs[len(evs)-1]
		if last["outcome"] != "succeeded" || last["answer"] != "secret answer" {
			t.Fatalf("operation.completed: %v", last)
		}
		if u := last["usage"].(map[string]any); u["input"] != 80.0 || u["output"] != 10.0 {
			t.Fatalf("usage: %v", u)
		}
		if ts := evs[7]; ts["toolStartedId"] == nil || ts["toolStartedId"] == "" || ts["parentAttemptId"] != evs[4]["attemptId"] || ts["attemptId"] == evs[4]["attemptId"] {
			t.Fatalf("tool.started ids: %v vs model %v", ts, evs[4])
		}
		if strings.Contains(stdout, "private") || strings.Contains(stdout, "a.txt") {
			t.Fatal("events carry the prompt, arguments or results")
		}
	})
	t.Run("failed run", func(t *testing.T) {
		srv := providertest.New(t, providertest.Reply{Status: 500})
		c := newCLI(t, srv)
		code, stdout, _ := c.main("", "--json", "hi")
		if code != 1 {
			t.Fatalf("exit %d", code)
		}
		evs := events(t, stdout)
		if got := names(evs); got != "startup.started session.attached startup.completed operation.started model.started model.completed operation.completed" {
			t.Fatalf("events: %s", got)
		}
		if evs[5]["outcome"] != "failed" || evs[6]["outcome"] != "failed" || evs[6]["errorType"] != "model_error" {
			t.Fatalf("failure events: %v / %v", evs[5], evs[6])
		}
	})
	t.Run("resumed run", func(t *testing.T) {
		srv := providertest.New(t, providertest.Reply{Text: "recovered"})
		c := newCLI(t, srv)
		id := openAttemptSession(t, c)
		code, stdout, stderr := c.main("", "--json", "--session", id)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		evs := events(t, stdout)
		want := "startup.started session.attached startup.completed operation.recovered model.started model.completed operation.completed"
		if got := names(evs); got != want {
			t.Fatalf("events:\n got %s\nwant %s", got, want)
		}
		if evs[1]["resumed"] != true || evs[3]["recovery"] != true || evs[4]["attempt"] != 2.0 || evs[6]["recovery"] != true {
			t.Fatalf("recovery fields: %v", evs)
		}
	})
	t.Run("attempts exhausted is reconciled", func(t *testing.T) {
		c := newCLI(t, providertest.New(t))
		id := openAttemptSession(t, c)
		killResume(t, c, id) // leaves attempt 2 open as well
		code, stdout, stderr := c.main("", "--json", "--session", id)
		if code != 1 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		evs := events(t, stdout)
		want := "startup.started session.attached startup.completed operation.recovered model.reconciled operation.completed"
		if got := names(evs); got != want {
			t.Fatalf("events:\n got %s\nwant %s", got, want)
		}
		if r := evs[4]; r["recovery"] != true || r["outcome"] != "failed" || r["errorType"] != "attempts_exhausted" || r["attempt"] != nil && r["attempt"] != 2.0 {
			t.Fatalf("model.reconciled: %v", r)
		}
		if last := evs[5]; last["outcome"] != "failed" || last["errorType"] != "attempts_exhausted" {
			t.Fatalf("operation.completed: %v", last)
		}
	})
	t.Run("reconciled attempt", func(t *testing.T) {
		c := newCLI(t, providertest.New(t))
		id := openAttemptSession(t, c)
		code, stdout, stderr := c.main("", "session", "abort", id)
		if code != 0 || !strings.Contains(stdout, "Aborted the open run") {
			t.Fatalf("session abort exit %d: %s %s", code, stdout, stderr)
		}
		st := c.state()
		if !st.Idle() {
			t.Fatal("session abort left the operation open")
		}
	})
}

// openAttemptSession makes a session whose run has an open attempt, as a
// process killed mid-request leaves it, and returns its id.
func openAttemptSession(t *testing.T, c *cliRun) string {
	t.Helper()
	killDuringRequest(t, c, "--cwd", c.dir, "hello")
	st := c.state()
	if st.Operation == nil || st.Operation.Step == nil || st.Operation.Step.Status != session.StepAttempting {
		t.Fatal("no open attempt")
	}
	return st.Header.ID
}

// killResume resumes id in a real process whose provider hangs, and kills
// it with SIGKILL once the retried request is in flight.
func killResume(t *testing.T, c *cliRun, id string) {
	t.Helper()
	killDuringRequest(t, c, "--cwd", c.dir, "--json", "--session", id)
	if st := c.state(); st.Operation == nil || st.Operation.Step == nil || st.Operation.Step.Attempt != 2 {
		t.Fatal("attempt 2 is not open")
	}
}

// killDuringRequest runs tiny-go with args against a provider that hangs
// and kills it with SIGKILL once its model request is in flight.
func killDuringRequest(t *testing.T, c *cliRun, args ...string) {
	t.Helper()
	srv := providertest.New(t, providertest.Reply{Hang: true})
	cmd := c.command(srv.URL(), args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(srv.Requests()) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no model request")
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
}

// command is tiny-go as a real process with c's environment and endpoint.
func (c *cliRun) command(endpoint string, args ...string) *exec.Cmd {
	cmd := exec.Command(programAs(c.t, "tiny-go-crash"), args...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	for k, v := range c.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Env = append(cmd.Env, "TINY_ENDPOINT="+endpoint)
	return cmd
}

// programAs returns a link to this test binary named name, so that started
// through it the binary runs that script command (see TestMain).
func programAs(t *testing.T, name string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), name)
	if err := os.Symlink(exe, link); err != nil {
		t.Fatal(err)
	}
	return link
}

// SIGTERM during a long bash call runs the abort path: the process ends
// quickly, the process group is gone, and the session ends aborted with the
// interrupted result.
func TestSIGTERMDuringBash(t *testing.T) {
	// The pid file lies outside the working directory: a running command's
	// writes there reach the tree only when it ends (the overlay).
	pidFile := filepath.Join(t.TempDir(), "pid")
	srv := providertest.New(t, providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", mustJSON(t, map[string]string{"command": "echo $$ > " + pidFile + "; sleep 30"}))}})
	c := newCLI(t, srv)
	cmd := c.command(srv.URL(), "--cwd", c.dir, "deploy")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var shellPID int
	deadline := time.Now().Add(10 * time.Second)
	for shellPID == 0 {
		if b, err := os.ReadFile(pidFile); err == nil && len(bytes.TrimSpace(b)) > 0 {
			_, _ = fmtSscan(string(b), &shellPID)
		}
		if time.Now().After(deadline) {
			t.Fatal("bash never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// bash wrote its pid in its own PID namespace (1 there).
	host := procs.HostPID(shellPID, c.dir)
	if host <= 1 {
		t.Fatalf("bash (pid %d in its namespace) not found in %s", shellPID, c.dir)
	}
	shellPID = host
	began := time.Now()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	err := cmd.Wait()
	if d := time.Since(began); d > testenv.Scale(2*time.Second) {
		t.Fatalf("exit took %v", d)
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v (%s)", err, stderr.String())
	}
	if syscall.Kill(-shellPID, 0) == nil && procs.GroupAlive(shellPID) {
		t.Fatal("the bash process group survived")
	}
	st := c.state()
	if !st.Idle() {
		t.Fatal("the session is still open")
	}
	last := st.Transcript[len(st.Transcript)-1]
	if last.Role != session.RoleTool || *last.Content != session.ContentInterrupted {
		t.Fatalf("last message: %+v", last)
	}
	if !strings.Contains(stderr.String(), "Resume: tiny-go --session") {
		t.Fatalf("stderr: %s", stderr.String())
	}
}

func fmtSscan(s string, pid *int) (int, error) { return fmt.Sscan(strings.TrimSpace(s), pid) }

// A resume whose configuration differs from the open attempt's is blocked:
// it appends nothing, says why and how out, and session abort ends it.
func TestBlockedResumeAndExplicitAbort(t *testing.T) {
	c := newCLI(t, providertest.New(t))
	id := openAttemptSession(t, c)
	file := c.sessions()[0]
	before, _ := os.ReadFile(file)
	code, _, stderr := c.main("", "--session", id, "--model", "other/model", "continue")
	if code != 1 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"configuration_changed", "tiny-go session abort " + id} {
		if !strings.Contains(stderr, want) {
			t.Fatalf("stderr lacks %q: %s", want, stderr)
		}
	}
	if after, _ := os.ReadFile(file); !bytes.Equal(before, after) {
		t.Fatal("a blocked resume appended bytes")
	}
	// session list tells which open sessions would be blocked here.
	if _, stdout, _ := c.main("", "session", "list"); !strings.Contains(stdout, "open run") {
		t.Fatalf("session list:\n%s", stdout)
	}
	c.env["TINY_MODEL"] = "other/model"
	if _, stdout, _ := c.main("", "session", "list"); !strings.Contains(stdout, "blocked (configuration_changed)") {
		t.Fatalf("session list:\n%s", stdout)
	}
	delete(c.env, "TINY_MODEL")
	code, stdout, stderr := c.main("", "session", "abort", id)
	if code != 0 {
		t.Fatalf("session abort: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "Aborted the open run") {
		t.Fatalf("stdout: %s", stdout)
	}
	st := c.state()
	if !st.Idle() {
		t.Fatal("still open after session abort")
	}
	b, _ := os.ReadFile(file)
	if !strings.Contains(string(b), `"code":"aborted"`) || !strings.Contains(string(b), `"outcome":"aborted"`) {
		t.Fatalf("abort facts missing:\n%s", b)
	}
	// Nothing left to abort.
	code, stdout, _ = c.main("", "session", "abort", id)
	if code != 0 || !strings.Contains(stdout, "nothing to abort") {
		t.Fatalf("second abort: exit %d %s", code, stdout)
	}
}

// Resuming without --model keeps the session's model.
func TestResumeKeepsTheSessionModel(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Text: "one"}, providertest.Reply{Text: "two"}, providertest.Reply{Text: "three"})
	c := newCLI(t, srv)
	if code, _, stderr := c.main("", "--model", "custom/model", "first"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	id := c.state().Header.ID
	if code, _, stderr := c.main("", "--session", id, "second"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if code, _, stderr := c.main("", "--continue", "--model", "other/model", "third"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	reqs := srv.Requests()
	if reqs[1].Chat.Model != "custom/model" || reqs[2].Chat.Model != "other/model" {
		t.Fatalf("models: %q then %q", reqs[1].Chat.Model, reqs[2].Chat.Model)
	}
	if len(c.sessions()) != 1 {
		t.Fatalf("%d sessions; --session and --continue must reuse the first", len(c.sessions()))
	}
}

// "help" and "completion" at the start of a prompt are words of the prompt.
// help and completion are commands (cli_manners.txtar); after -- they
// start a prompt.
func TestPromptsThatLookLikeCommands(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Text: "a"}, providertest.Reply{Text: "b"})
	c := newCLI(t, srv)
	for _, words := range [][]string{{"--", "help", "me", "fix", "this"}, {"--", "completion", "of", "the", "task"}} {
		if code, _, stderr := c.main("", words...); code != 0 {
			t.Fatalf("%v: exit %d: %s", words, code, stderr)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || *reqs[0].Chat.Messages[1].Content != "help me fix this" {
		t.Fatalf("requests: %d", len(reqs))
	}
}

// Commands the model runs do not inherit tiny-go's credentials.
func TestBashDoesNotSeeTheAPIKey(t *testing.T) {
	t.Setenv("OPENROUTER_API_KEY", "sk-secret-in-environ")
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "bash", `{"command":"env"}`)}},
		providertest.Reply{Text: "ok"},
	)
	c := newCLI(t, srv)
	c.env["OPENROUTER_API_KEY"] = "sk-secret-in-environ"
	if code, _, stderr := c.main("", "show env"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(c.sessions()[0])
	if strings.Contains(string(b), "sk-secret-in-environ") {
		t.Fatal("the API key reached the session file through bash")
	}
	if !strings.Contains(string(b), "PATH=") {
		t.Fatal("bash ran without its environment")
	}
}
