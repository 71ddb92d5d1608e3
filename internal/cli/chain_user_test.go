package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/testenv"
)

// thresholdChain is a task of four reads whose reported prompts grow
// (300, 500, 700, 900 tokens): against --context-window 1000 (share 0.85)
// the fourth passes the threshold, so the run ends context_limit between
// steps, a compaction summarizes, and the continuation run answers.
func thresholdChain(t *testing.T) *providertest.Server {
	t.Helper()
	var replies []providertest.Reply
	for i, prompt := range []int64{300, 500, 700, 900} {
		replies = append(replies, providertest.Reply{
			ToolCalls: []providertest.ToolCall{toolCall(providertest.LongTaskCallID(i+1), "read", `{"path":"a.txt"}`)},
			Usage:     &providertest.Usage{PromptTokens: prompt, CompletionTokens: 5},
		})
	}
	replies = append(replies,
		providertest.Reply{Text: "SUMMARY OF THE WORK", Usage: &providertest.Usage{PromptTokens: 400, CompletionTokens: 5}},
		providertest.Reply{Text: "all done", Usage: &providertest.Usage{PromptTokens: 350, CompletionTokens: 5}},
	)
	return providertest.New(t, replies...)
}

// runProgram runs tiny-go as a real process in a fresh directory holding
// a.txt, and returns its exit code, stdout, stderr and the directory.
func runProgram(t *testing.T, srv *providertest.Server, args ...string) (code int, stdout, stderr, dir string) {
	t.Helper()
	dir = testenv.WorkDir(t)
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := program(t, dir, srv, args...)
	cmd.Env = append(cmd.Env, "TINY_CONTEXT_WINDOW=", "TINY_COMPACT_SHARE=")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, out.String(), errb.String(), dir
}

// checkChained asserts that the session in dir went through the chain
// run -> compaction -> continuation run and is idle.
func checkChained(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile(sessionFiles(t, dir)[0])
	if err != nil {
		t.Fatal(err)
	}
	st, corrupt := session.Reduce(b)
	if corrupt != nil || !st.Idle() || st.ContinuationOwed {
		t.Fatalf("session: %v, idle %v, continuation owed %v", corrupt, st != nil && st.Idle(), st != nil && st.ContinuationOwed)
	}
	if bytes.Count(b, []byte(`"type":"compactionStarted"`)) != 1 || !bytes.Contains(b, []byte(`"code":"context_limit"`)) || !bytes.Contains(b, []byte(agentContinuePrompt)) {
		t.Fatal("the session does not hold one run -> compaction -> continuation chain")
	}
}

// TestOneShotCompactsInsideTheRun: a one-shot run whose context fills
// shows "compacting…" on stderr and goes on as one task: the answer (and
// nothing else, not the summary) on stdout, no failure shown, exit 0.
func TestOneShotCompactsInsideTheRun(t *testing.T) {
	srv := thresholdChain(t)
	code, stdout, stderr, dir := runProgram(t, srv, "--context-window", "1000", "do the task")
	if code != 0 || stdout != "all done\n" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	if n := strings.Count(stderr, "compacting…\n"); n != 1 {
		t.Fatalf("%d \"compacting…\" lines on stderr, want 1:\n%s", n, stderr)
	}
	// The four reads come before the compaction line; nothing says the
	// task failed or ran out of context.
	if i := strings.Index(stderr, "compacting…"); strings.Count(stderr[:i], "◆ read a.txt") != 4 {
		t.Fatalf("stderr:\n%s", stderr)
	}
	for _, bad := range []string{"ailed", "context_limit", "context window", "SUMMARY"} {
		if strings.Contains(stderr, bad) {
			t.Errorf("stderr shows %q:\n%s", bad, stderr)
		}
	}
	if n := len(srv.Requests()); n != 6 {
		t.Fatalf("%d model requests, want 6 (4 steps, the summary, the continuation)", n)
	}
	checkChained(t, dir)
}

// TestJSONShowsEachOperationOfTheChain: with --json the chain is three
// operations, each with its events in the canonical order of events.md:
// the run that filled the window (failed, context_limit), the compaction
// (its summary request, no tools), the continuation run with the answer.
// The process exits 0.
func TestJSONShowsEachOperationOfTheChain(t *testing.T) {
	srv := thresholdChain(t)
	code, stdout, stderr, dir := runProgram(t, srv, "--json", "--context-window", "1000", "do the task")
	if code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	evs := events(t, stdout)
	step := " model.started model.completed tool.admitted tool.started tool.completed"
	want := "startup.started session.attached startup.completed" +
		" operation.started" + strings.Repeat(step, 4) + " operation.completed" +
		" operation.started model.started model.completed operation.completed" +
		" operation.started model.started model.completed operation.completed"
	if got := names(evs); got != want {
		t.Fatalf("events:\n got %s\nwant %s", got, want)
	}
	for _, ev := range evs {
		checkEventShape(t, ev)
	}

	// The operations, in order, and what each event says of its own.
	type op struct {
		kind, outcome string
		events        []map[string]any
	}
	var ops []op
	for _, ev := range evs {
		switch ev["type"] {
		case "operation.started":
			ops = append(ops, op{kind: ev["operationKind"].(string)})
		case "operation.completed":
			ops[len(ops)-1].outcome = ev["outcome"].(string)
		}
		if len(ops) > 0 {
			ops[len(ops)-1].events = append(ops[len(ops)-1].events, ev)
		}
	}
	var got []string
	for _, o := range ops {
		got = append(got, o.kind+":"+o.outcome)
	}
	if strings.Join(got, " ") != "run:failed compaction:succeeded run:succeeded" {
		t.Fatalf("operations %v, want run:failed compaction:succeeded run:succeeded", got)
	}
	ids := map[any]bool{}
	for _, o := range ops {
		opID := o.events[0]["operationId"]
		if ids[opID] {
			t.Fatalf("operation id %v used twice", opID)
		}
		ids[opID] = true
		for _, ev := range o.events {
			if ev["operationId"] != opID {
				t.Fatalf("%s of operation %v carries operationId %v", ev["type"], opID, ev["operationId"])
			}
			if k, ok := ev["operationKind"]; ok && k != o.kind {
				t.Fatalf("%s of a %s says operationKind %v", ev["type"], o.kind, k)
			}
			if ev["recovery"] != false {
				t.Fatalf("%s: recovery %v in a fresh process", ev["type"], ev["recovery"])
			}
		}
	}
	first, compaction, cont := ops[0].events, ops[1].events, ops[2].events
	if end := first[len(first)-1]; end["errorType"] != "context_limit" || end["answer"] != nil {
		t.Fatalf("the run that filled the window ended %v", end)
	}
	if end := compaction[len(compaction)-1]; end["answer"] != nil || end["errorType"] != nil {
		t.Fatalf("the compaction ended %v", end)
	}
	if end := cont[len(cont)-1]; end["answer"] != "all done" || end["errorType"] != nil {
		t.Fatalf("the continuation ended %v", end)
	}
	if strings.Contains(stdout, "SUMMARY") || strings.Contains(stdout, "do the task") {
		t.Fatal("events carry the summary or the prompt")
	}
	checkChained(t, dir)
}

// eventFields are the members events.md gives each event besides type
// and timestamp; a trailing "?" marks an optional one.
var eventFields = map[string][]string{
	"startup.started":     {"model", "runtime", "plugins", "mcp"},
	"session.attached":    {"sessionId", "resumed"},
	"startup.completed":   {"durationMs", "outcome", "errorType?"},
	"operation.started":   {"sessionId", "operationId", "operationKind", "recovery"},
	"model.started":       {"sessionId", "operationId", "operationKind", "stepId", "attemptId", "attempt", "recovery"},
	"model.completed":     {"sessionId", "operationId", "operationKind", "stepId", "attemptId", "recovery", "durationMs", "outcome", "usage?", "errorType?"},
	"tool.admitted":       {"sessionId", "operationId", "stepId", "toolStartedId", "toolCallId", "tool", "replay", "recovery"},
	"tool.started":        {"sessionId", "operationId", "stepId", "attemptId", "parentAttemptId", "toolStartedId", "toolCallId", "tool", "recovery"},
	"tool.completed":      {"sessionId", "operationId", "stepId", "attemptId", "parentAttemptId", "toolStartedId", "toolCallId", "tool", "recovery", "durationMs", "outcome"},
	"operation.completed": {"sessionId", "operationId", "operationKind", "recovery", "durationMs", "outcome", "completion?", "answer?", "usage", "errorType?", "errorMessage?"},
}

// checkEventShape fails on an event that lacks a member events.md gives
// it or has one it does not, or whose outcome, operationKind or usage is
// not as the spec has them.
func checkEventShape(t *testing.T, ev map[string]any) {
	t.Helper()
	typ, _ := ev["type"].(string)
	fields, ok := eventFields[typ]
	if !ok {
		t.Fatalf("event of unknown type: %v", ev)
	}
	allowed := map[string]bool{"type": true, "timestamp": true}
	for _, f := range fields {
		name, optional := strings.CutSuffix(f, "?")
		allowed[name] = true
		if v, ok := ev[name]; !optional && (!ok || v == nil) {
			t.Fatalf("%s lacks %s: %v", typ, name, ev)
		}
	}
	for name := range ev {
		if !allowed[name] {
			t.Fatalf("%s has %s, which events.md does not give it: %v", typ, name, ev)
		}
	}
	if k, ok := ev["operationKind"]; ok && k != "run" && k != "compaction" {
		t.Fatalf("%s: operationKind %v", typ, k)
	}
	if o, ok := ev["outcome"]; ok && typ != "startup.completed" {
		switch o {
		case "succeeded", "failed", "cancelled", "effect_unknown":
		default:
			t.Fatalf("%s: outcome %v", typ, o)
		}
	}
	if u, ok := ev["usage"].(map[string]any); ok {
		for _, f := range []string{"input", "output", "cacheRead", "cacheWrite", "cacheHitRate"} {
			if _, ok := u[f]; !ok {
				t.Fatalf("%s: usage lacks %s: %v", typ, f, u)
			}
		}
	}
}

// TestOneShotCompactsOnOverflow: the same when the provider rejects a
// request as too long for the window (OpenAI's 400): the rejection is not
// shown, "compacting…" is, and the task finishes with its answer.
func TestOneShotCompactsOnOverflow(t *testing.T) {
	code, stdout, stderr, dir := runProgram(t, chainServer(t, nil), "do the long task")
	if code != 0 || stdout != "chain done\n" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	if n := strings.Count(stderr, "compacting…\n"); n != 1 {
		t.Fatalf("%d \"compacting…\" lines on stderr, want 1:\n%s", n, stderr)
	}
	for _, bad := range []string{"ailed", "maximum context length", "context_limit", "Summary of the task"} {
		if strings.Contains(stderr, bad) {
			t.Errorf("stderr shows %q:\n%s", bad, stderr)
		}
	}
	// The status as a word: the session id printed on stderr is hex and
	// may hold the digits "400".
	if regexp.MustCompile(`\b400\b`).MatchString(stderr) {
		t.Errorf("stderr shows the 400:\n%s", stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "effects")); string(b) != "1\n2\n3\n4\n5\n" {
		t.Fatalf("effects %q: each step once, in order", b)
	}
	checkChained(t, dir)
}
