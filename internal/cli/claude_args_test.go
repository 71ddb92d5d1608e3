package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// Claude Code's command lines, run through the real binary against the
// scripted model (issue 41): flags after the prompt are flags, -c and
// -r/--resume [ID] resume, a prompt that starts with - goes after --, and
// a mistyped flag names the nearest one.

// claudeRun is one run of the binary in c's directory.
type claudeRun struct {
	code           int
	stdout, stderr string
}

func (c *cliRun) claude(srv *providertest.Server, stdin string, args ...string) claudeRun {
	c.t.Helper()
	cmd := exec.Command(programAs(c.t, "tiny-go"), args...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), childEnv+"=1")
	for k, v := range c.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if srv != nil {
		cmd.Env = append(cmd.Env, "TINY_ENDPOINT="+srv.URL())
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(stdin), &stdout, &stderr
	err := cmd.Run()
	r := claudeRun{stdout: stdout.String(), stderr: stderr.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		c.t.Fatal(err)
	}
	return r
}

// lastPrompt is the text of the last user message of request i.
func lastPrompt(t *testing.T, srv *providertest.Server, i int) string {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) <= i {
		t.Fatalf("%d model requests; want request %d", len(reqs), i)
	}
	msgs := reqs[i].Chat.Messages
	for j := len(msgs) - 1; j >= 0; j-- {
		if msgs[j].Role == "user" && msgs[j].Content != nil {
			return *msgs[j].Content
		}
	}
	t.Fatalf("request %d has no user message", i)
	return ""
}

// sessionIDs are the ids of the sessions in c's directory.
func (c *cliRun) sessionIDs() []string {
	var ids []string
	for _, p := range c.sessions() {
		_, id, _ := strings.Cut(strings.TrimSuffix(filepath.Base(p), ".jsonl"), "_")
		ids = append(ids, id)
	}
	return ids
}

// oneResult is stdout as exactly one JSON result object.
func oneResult(t *testing.T, r claudeRun) map[string]any {
	t.Helper()
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	if err := dec.Decode(&m); err != nil || m["type"] != "result" || dec.More() {
		t.Fatalf("stdout is not one JSON result object (%v):\n%s\nstderr:\n%s", err, r.stdout, r.stderr)
	}
	return m
}

func TestFlagsAfterThePrompt(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Text: "It explains itself."})
	c := newCLI(t, srv)
	r := c.claude(srv, "", "-p", "explain this", "--output-format", "json")
	res := oneResult(t, r)
	if r.code != 0 || res["result"] != "It explains itself." {
		t.Fatalf("exit %d, result %v", r.code, res["result"])
	}
	if got := lastPrompt(t, srv, 0); got != "explain this" {
		t.Fatalf("the model got the prompt %q; want %q", got, "explain this")
	}
	id := res["session_id"].(string)

	// -p --resume ID --output-format json x: resumes ID with the prompt x;
	// so do --resume=ID, -r ID and -c, before or after the prompt.
	for i, args := range [][]string{
		{"-p", "--resume", id, "--output-format", "json", "x1"},
		{"-p", "x2", "--resume=" + id, "--output-format=json"},
		{"-pr", id, "x3", "--output-format", "json"},
		{"x4", "-c", "--output-format", "json", "-p"},
	} {
		srv.Enqueue(providertest.Reply{Text: "ok"})
		r := c.claude(srv, "", args...)
		res := oneResult(t, r)
		if r.code != 0 || res["session_id"] != id {
			t.Fatalf("%q: exit %d, session %v; want %s\n%s", args, r.code, res["session_id"], id, r.stderr)
		}
		want := "x" + string(rune('1'+i))
		if got := lastPrompt(t, srv, i+1); got != want {
			t.Fatalf("%q: the model got the prompt %q; want %q", args, got, want)
		}
	}
	if ids := c.sessionIDs(); len(ids) != 1 || ids[0] != id {
		t.Fatalf("sessions %v; every run resumed the first", ids)
	}

	// One-shot mode without -p: the same flags.
	srv.Enqueue(providertest.Reply{Text: "one shot"}, providertest.Reply{Text: "and again"})
	for i, args := range [][]string{{"-r", id, "y1", "--model", "m/one"}, {"y2", "--continue"}} {
		r := c.claude(srv, "", args...)
		if r.code != 0 || !strings.Contains(r.stderr, "Resume: tiny-go --session "+id) {
			t.Fatalf("%q: exit %d\n%s", args, r.code, r.stderr)
		}
		if got := lastPrompt(t, srv, 5+i); got != "y"+string(rune('1'+i)) {
			t.Fatalf("%q: the model got the prompt %q", args, got)
		}
	}
	if m := srv.Requests()[5].Chat.Model; m != "m/one" {
		t.Errorf("--model after the prompt was not a flag: model %q", m)
	}
}

// A prompt that starts with - goes after --; what comes after -- is never
// a flag.
func TestDashPromptAfterDoubleDash(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Text: "verbose"}, providertest.Reply{Text: "answer"})
	c := newCLI(t, srv)
	r := c.claude(srv, "", "-p", "--output-format", "json", "--", "-v means what?", "--model")
	if res := oneResult(t, r); r.code != 0 || res["result"] != "verbose" {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if got := lastPrompt(t, srv, 0); got != "-v means what? --model" {
		t.Fatalf("the model got %q", got)
	}
	// Without -- it is a flag, and an unknown one says so.
	r = c.claude(srv, "", "-p", "-x means what?")
	if r.code != exitUsage || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "after --") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if len(srv.Requests()) != 1 {
		t.Fatal("a usage error reached the model")
	}
}

// A mistyped flag is one line naming the nearest flag, long or short.
func TestUnknownFlagOneLine(t *testing.T) {
	c := newCLI(t, nil)
	for args, want := range map[string]string{
		"-p|explain this|--outptu-format|json": "tiny-go: unknown flag: --outptu-format (did you mean --output-format?)\n",
		"--permision-mode|plan|x":              "tiny-go: unknown flag: --permision-mode (did you mean --permission-mode?)\n",
		"--contineu":                           "tiny-go: unknown flag: --contineu (did you mean --continue?)\n",
	} {
		r := c.claude(nil, "", strings.Split(args, "|")...)
		if r.code != exitUsage || r.stderr != want {
			t.Errorf("%s: exit %d, stderr %q; want %q", args, r.code, r.stderr, want)
		}
	}
	r := c.claude(nil, "", "-x", "hi")
	if r.code != exitUsage || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "unknown shorthand flag: 'x' in -x") || !strings.Contains(r.stderr, "-c, -h, -p, -r and -v") {
		t.Errorf("-x: exit %d, stderr %q", r.code, r.stderr)
	}
	r = c.claude(nil, "", "--permission-mode", "yolo", "hi")
	if r.code != exitUsage || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "acceptEdits") {
		t.Errorf("--permission-mode yolo: exit %d, stderr %q", r.code, r.stderr)
	}
}

func bashAs(id, command string) providertest.ToolCall {
	b, _ := json.Marshal(map[string]string{"command": command})
	return toolCall(id, "bash", string(b))
}

// --permission-mode acceptEdits in one-shot mode: edits and file commands
// inside the working directory run without asking, anything else is asked
// about (here denied on stdin); default asks about everything.
func TestPermissionModesOneShot(t *testing.T) {
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{
			bashAs("c1", "mkdir -p d && touch d/a && cp d/a d/b"),
			toolCall("c2", "write", `{"path":"w.txt","content":"w\n"}`),
		}},
		providertest.Reply{ToolCalls: []providertest.ToolCall{bashAs("c3", "echo hi > x.txt")}},
		providertest.Reply{Text: "done"},
	)
	c := newCLI(t, srv)
	exists := func(name string) bool { _, err := os.Stat(filepath.Join(c.dir, name)); return err == nil }
	r := c.claude(srv, "n not that\n", "make files", "--permission-mode", "acceptEdits")
	if r.code != 0 || !exists("d/a") || !exists("d/b") || !exists("w.txt") || exists("x.txt") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if n := strings.Count(r.stderr, "Allow? "); n != 1 || !strings.Contains(r.stderr, "echo hi > x.txt") {
		t.Fatalf("%d questions; want one, about echo:\n%s", n, r.stderr)
	}
	if body := string(srv.Requests()[2].Body); !strings.Contains(body, "not that") {
		t.Fatal("the model did not see the denial's reason")
	}

	// default: the file command is asked about too.
	srv.Enqueue(providertest.Reply{ToolCalls: []providertest.ToolCall{bashAs("c4", "touch e.txt")}}, providertest.Reply{Text: "ok"})
	r = c.claude(srv, "y\n", "one more", "--permission-mode", "default")
	if r.code != 0 || !exists("e.txt") || strings.Count(r.stderr, "Allow? ") != 1 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}

	// plan: the command runs against a read-only tree.
	srv.Enqueue(providertest.Reply{ToolCalls: []providertest.ToolCall{bashAs("c5", "touch p.txt")}}, providertest.Reply{Text: "planned"})
	r = c.claude(srv, "", "plan it", "--permission-mode", "plan")
	if r.code != 0 || exists("p.txt") || !strings.Contains(r.stdout, "planned") {
		t.Fatalf("plan mode: exit %d, p.txt made: %v\n%s", r.code, exists("p.txt"), r.stderr)
	}

	// --dangerously-skip-permissions with --approval ask disagree.
	r = c.claude(srv, "", "x", "--approval", "ask", "--dangerously-skip-permissions")
	if r.code != exitUsage || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	// Print mode's own modes are refused outside it, in one line.
	r = c.claude(srv, "", "x", "--permission-mode", "dontAsk")
	if r.code != exitUsage || !strings.Contains(r.stderr, "print mode (-p) only") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if len(srv.Requests()) != 7 {
		t.Fatalf("%d model requests; a usage error reached the model", len(srv.Requests()))
	}
}

// Print mode's acceptEdits runs file commands in the working directory as
// Claude Code does, and denies others without a permission prompt tool.
func TestPermissionModeAcceptEditsPrint(t *testing.T) {
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{bashAs("c1", "touch t.txt && mkdir m"), bashAs("c2", "echo hi > x.txt"), bashAs("c3", "touch ../out.txt")}},
		providertest.Reply{Text: "done"},
	)
	c := newCLI(t, srv)
	r := c.claude(srv, "", "-p", "go", "--permission-mode", "acceptEdits", "--output-format", "json")
	res := oneResult(t, r)
	if r.code != 0 || res["result"] != "done" {
		t.Fatalf("exit %d: %v\n%s", r.code, res, r.stderr)
	}
	for name, want := range map[string]bool{"t.txt": true, "m": true, "x.txt": false, "../out.txt": false} {
		if _, err := os.Stat(filepath.Join(c.dir, name)); (err == nil) != want {
			t.Errorf("%s exists: %v, want %v", name, err == nil, want)
		}
	}
	if denials, _ := res["permission_denials"].([]any); len(denials) != 2 {
		t.Errorf("permission_denials %v; want the echo and the touch outside", res["permission_denials"])
	}
}
