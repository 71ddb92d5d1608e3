package agent

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

func TestRunWithEveryBuiltinTool(t *testing.T) {
	h := newHarness(t, []providertest.Reply{
		calls(call("c1", "read", `{"path":"notes.txt"}`)),
		calls(call("c2", "bash", `{"command":"echo ran >> marker.txt"}`)),
		calls(call("c3", "write", `{"path":"out/new.txt","content":"hello\n"}`)),
		calls(call("c4", "edit", `{"path":"out/new.txt","edits":[{"oldText":"hello","newText":"goodbye"}]}`)),
		{Text: "All done.", Usage: usage(120, 7)},
	})
	if err := os.WriteFile(h.path("notes.txt"), []byte("line one\nline two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res := h.run("do the thing")
	if res.Outcome != session.OutcomeCompleted || res.Completion != session.CompletionNormal || res.Answer != "All done." {
		t.Fatalf("result = %+v", res)
	}
	want := "user runStarted " +
		"stepAttempt:assistant assistant:toolUse usage toolStarted tool:success " +
		"stepAttempt:assistant assistant:toolUse usage toolStarted tool:success " +
		"stepAttempt:assistant assistant:toolUse usage toolStarted tool:success " +
		"stepAttempt:assistant assistant:toolUse usage toolStarted tool:success " +
		"stepAttempt:assistant assistant:stop usage operationFinished:completed"
	if got := h.labels(); got != want {
		t.Fatalf("facts:\n got %s\nwant %s", got, want)
	}
	if b, _ := os.ReadFile(h.path("marker.txt")); string(b) != "ran\n" {
		t.Fatalf("marker = %q", b)
	}
	if b, _ := os.ReadFile(h.path("out/new.txt")); string(b) != "goodbye\n" {
		t.Fatalf("edited file = %q", b)
	}
	st := h.reduce()
	if !st.Idle() || st.Usage.Input != 120 || st.Usage.Output != 7 {
		t.Fatalf("state: idle=%v usage=%+v", st.Idle(), st.Usage)
	}
	// The read result reached the next request, after the system prompt.
	reqs := h.server.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests", len(reqs))
	}
	second := reqs[1].Chat.Messages
	if second[0].Role != "system" || !strings.Contains(*second[len(second)-1].Content, "line two") {
		t.Fatalf("second request messages: %+v", second)
	}
	if len(reqs[0].Chat.Tools) != 5 {
		t.Fatalf("tools offered: %d", len(reqs[0].Chat.Tools))
	}
	// The final answer and its terminal are one transaction.
	lines := strings.Split(strings.TrimSpace(string(h.bytes())), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "[") || !strings.Contains(last, `"operationFinished"`) || !strings.Contains(last, `"All done."`) {
		t.Fatalf("last line is not [answer, usage, terminal]: %s", last)
	}
}

func TestPreExecutionSyntheticResults(t *testing.T) {
	h := newHarness(t, []providertest.Reply{
		calls(
			call("c1", "read", `{"path":`),
			call("c2", "nosuch", `{}`),
			call("c3", "read", `[1,2]`),
			call("c4", "bash", `{"command":"echo ok > ran.txt"}`),
		),
		text("handled"),
	})
	res := h.run("go")
	if res.Outcome != session.OutcomeCompleted {
		t.Fatalf("result = %+v", res)
	}
	want := "user runStarted stepAttempt:assistant assistant:toolUse usage " +
		"synthetic:invalidArguments synthetic:unknownTool synthetic:invalidArguments toolStarted tool:success " +
		"stepAttempt:assistant assistant:stop usage operationFinished:completed"
	if got := h.labels(); got != want {
		t.Fatalf("facts:\n got %s\nwant %s", got, want)
	}
	msgs := h.server.Requests()[1].Chat.Messages
	contents := map[string]string{}
	for _, m := range msgs {
		if m.Role == "tool" {
			contents[m.ToolCallID] = *m.Content
		}
	}
	if contents["c1"] != session.ContentInvalidArguments || contents["c2"] != session.ContentUnknownTool || contents["c3"] != session.ContentInvalidArguments {
		t.Fatalf("synthetic contents: %q", contents)
	}
}

func TestDisabledToolGetsUnknownTool(t *testing.T) {
	h := newHarness(t, []providertest.Reply{
		calls(call("c1", "bash", `{"command":"touch should-not-exist"}`)),
		text("ok"),
	})
	// Rebuild the agent offering only read.
	cfg := h.cfg
	cfg.Tools = nil
	for _, tl := range h.cfg.Tools {
		if tl.Definition().Name == "read" {
			cfg.Tools = append(cfg.Tools, tl)
		}
	}
	h.agent = h.newAgent(cfg)
	h.run("go")
	if _, err := os.Stat(h.path("should-not-exist")); err == nil {
		t.Fatal("a disabled tool ran")
	}
	if got := h.labels(); !strings.Contains(got, "synthetic:unknownTool") {
		t.Fatalf("facts: %s", got)
	}
	if n := len(h.server.Requests()[0].Chat.Tools); n != 1 {
		t.Fatalf("offered %d tools, want 1", n)
	}
}

func TestLengthWithCallsIsTruncated(t *testing.T) {
	h := newHarness(t, []providertest.Reply{{
		ToolCalls:    []providertest.ToolCall{call("c1", "bash", `{"command":"touch a"}`), call("c2", "bash", `{"command":"touch b"}`)},
		FinishReason: "length",
	}})
	res := h.run("go")
	if res.Outcome != session.OutcomeCompleted || res.Completion != session.CompletionTruncated {
		t.Fatalf("result = %+v", res)
	}
	want := "user runStarted stepAttempt:assistant assistant:length usage synthetic:truncated synthetic:truncated operationFinished:completed"
	if got := h.labels(); got != want {
		t.Fatalf("facts:\n got %s\nwant %s", got, want)
	}
	for _, f := range []string{"a", "b"} {
		if _, err := os.Stat(h.path(f)); err == nil {
			t.Fatalf("truncated call %s ran", f)
		}
	}
}

// Each bad provider outcome ends the run failed with stepFailed(model_error)
// and a clear message, in one transaction, and the session stays valid.
func TestBadProviderOutcomes(t *testing.T) {
	cases := []struct {
		name  string
		reply providertest.Reply
		msg   string
	}{
		{"length without calls", providertest.Reply{Text: "partial", FinishReason: "length"}, "cut off by the model token limit"},
		{"empty reply", providertest.Reply{}, "empty reply"},
		{"unsupported finish reason", providertest.Reply{Text: "x", FinishReason: "end_of_world"}, "unsupported"},
		{"content filter", providertest.Reply{Text: "x", FinishReason: "content_filter"}, "the model declined to answer (content_filter)"},
		{"rate limited", providertest.Reply{Status: 429}, "429"},
		{"server error", providertest.Reply{Status: 500}, "500"},
		{"stream cut", providertest.Reply{Text: "hello world", ChunkSize: 2, Cut: true, After: 2}, "ended before"},
		{"tool use without calls", providertest.Reply{Text: "x", FinishReason: "tool_calls"}, "no tool calls"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, []providertest.Reply{c.reply})
			res := h.run("go")
			if res.Outcome != session.OutcomeFailed || res.Error == nil || res.Error.Code != session.CodeModelError {
				t.Fatalf("result = %+v", res)
			}
			if !strings.Contains(res.Error.Message, c.msg) {
				t.Fatalf("message %q does not mention %q", res.Error.Message, c.msg)
			}
			if strings.Contains(res.Error.Message, "test-key") {
				t.Fatal("the API key leaked into the message")
			}
			want := "user runStarted stepAttempt:assistant stepFailed:model_error operationFinished:failed"
			if got := h.labels(); got != want {
				t.Fatalf("facts:\n got %s\nwant %s", got, want)
			}
			if !h.reduce().Idle() {
				t.Fatal("not idle")
			}
			if n := len(h.server.Requests()); n != 1 {
				t.Fatalf("%d requests: a live failure must not be retried", n)
			}
		})
	}
}

func TestHungStreamTimesOut(t *testing.T) {
	h := newHarness(t, []providertest.Reply{{Text: "x", Hang: true, After: 1}})
	cfg := h.cfg
	p, err := providerWithIdle(h.server.URL(), 300)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Provider = p
	h.agent = h.newAgent(cfg)
	res := h.run("go")
	if res.Outcome != session.OutcomeFailed || !strings.Contains(res.Error.Message, "no data") {
		t.Fatalf("result = %+v", res)
	}
}

func TestSecondResumeAppendsNothing(t *testing.T) {
	h := newHarness(t, []providertest.Reply{text("hi")})
	h.run("hello")
	before := h.bytes()
	for i := 0; i < 2; i++ {
		h.reopen()
		if _, err := h.agent.Resume(context.Background()); err != nil {
			t.Fatal(err)
		}
		if after := h.bytes(); string(after) != string(before) {
			t.Fatalf("resume %d appended %d bytes", i+1, len(after)-len(before))
		}
	}
}

// panicTool is a broken tool.
type panicTool struct{}

func (panicTool) Definition() tools.Definition {
	return tools.Definition{Name: "broken", Description: "Always panics.", Parameters: jsontext.Value(`{"type":"object"}`)}
}
func (panicTool) Replay() tools.Replay {
	return tools.Replay{Policy: tools.ReplayNever, Key: "test:broken:v1"}
}
func (panicTool) Run(context.Context, jsontext.Value) tools.Result {
	panic("boom")
}

func TestPanickingToolBecomesAnErrorResult(t *testing.T) {
	h := newHarness(t, []providertest.Reply{calls(call("c1", "broken", `{}`)), text("recovered")})
	cfg := h.cfg
	cfg.Tools = append(cfg.Tools, panicTool{})
	h.agent = h.newAgent(cfg)
	res := h.run("go")
	if res.Outcome != session.OutcomeCompleted {
		t.Fatalf("result = %+v", res)
	}
	if got := h.labels(); !strings.Contains(got, "toolStarted tool:error") {
		t.Fatalf("facts: %s", got)
	}
	st := h.reduce()
	if c := *st.Transcript[2].Content; !strings.Contains(c, "failed unexpectedly: boom") {
		t.Fatalf("tool result: %q", c)
	}
}

func TestDuplicateCallIDsAreMadeUnique(t *testing.T) {
	h := newHarness(t, []providertest.Reply{
		calls(call("call_1", "bash", `{"command":"echo a >> m"}`), call("call_1", "bash", `{"command":"echo b >> m"}`)),
		text("done"),
	})
	res := h.run("go")
	if res.Outcome != session.OutcomeCompleted {
		t.Fatalf("result = %+v", res)
	}
	if b, _ := os.ReadFile(h.path("m")); string(b) != "a\nb\n" {
		t.Fatalf("marker = %q", b)
	}
	msgs := h.server.Requests()[1].Chat.Messages
	a := msgs[2]
	if len(a.ToolCalls) != 2 || a.ToolCalls[0].ID == a.ToolCalls[1].ID {
		t.Fatalf("tool calls sent back: %+v", a.ToolCalls)
	}
}

// A reply the session cannot record fails the step; it does not leave the
// attempt open for a blind retry.
func TestUnrecordableReplyFailsTheStep(t *testing.T) {
	h := newHarness(t, []providertest.Reply{{Text: "x", Usage: &providertest.Usage{PromptTokens: 1 << 60, CompletionTokens: 1 << 60}}})
	res := h.run("go")
	if res.Outcome != session.OutcomeFailed || !strings.Contains(res.Error.Message, "could not be recorded") {
		t.Fatalf("result = %+v", res)
	}
	if !h.reduce().Idle() {
		t.Fatal("the attempt was left open")
	}
}

// A prompt after an operation that broke off (here: a failed commit)
// first finishes that operation, then runs.
func TestRunSettlesABrokenOperationFirst(t *testing.T) {
	h := newHarness(t, []providertest.Reply{text("first answer"), text("retried answer"), text("second answer")}, crashAt(3))
	if _, err := h.agent.Run(context.Background(), "first"); !errors.Is(err, errCrash) {
		t.Fatalf("err = %v", err)
	}
	res := h.run("second")
	if res.Outcome != session.OutcomeCompleted || res.Answer != "second answer" {
		t.Fatalf("result = %+v", res)
	}
	st := h.reduce()
	var texts []string
	for _, m := range st.Transcript {
		texts = append(texts, *m.Content)
	}
	if got := strings.Join(texts, "|"); got != "first|retried answer|second|second answer" {
		t.Fatalf("transcript: %s", got)
	}
}
