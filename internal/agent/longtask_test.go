package agent

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tiny-agent/tiny-go/internal/conformance"
	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// longTask serves a task of steps tool rounds, each reading a 2 KiB file,
// and returns the harness whose window fits about fit steps.
func longTask(t testing.TB, h *harness, steps int) *providertest.LongTask {
	t.Helper()
	if err := os.WriteFile(h.path("big.txt"), bytes.Repeat([]byte("0123456789abcdef\n"), 120), 0o644); err != nil {
		t.Fatal(err)
	}
	lt := &providertest.LongTask{
		Steps:  steps,
		Answer: "The long task is done.",
		Call: func(int) providertest.ToolCall {
			return providertest.ToolCall{Name: "read", Arguments: `{"path":"big.txt"}`}
		},
	}
	h.server.Respond(lt.Reply)
	return lt
}

// longWindow fits about 12 of longTask's steps (each about 2.2 KiB, or
// 550 tokens at 4 bytes a token, over a base of about 1,000 tokens).
const longWindow = 8000

// A task far longer than the window finishes with its answer through
// repeated compactions; every request fits the window; the session file is
// valid line by line and reduces.
func TestLongTaskCompactsRepeatedly(t *testing.T) {
	h := newHarness(t, nil, withAutoCompact(longWindow, 0.85))
	longTask(t, h, 60)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := h.agent.Run(ctx, "do the long task")
	if err != nil || res.Answer != "The long task is done." {
		t.Fatalf("Run = %+v, %v", res, err)
	}
	labels := h.labels()
	compactions := strings.Count(labels, "compactionStarted")
	if compactions < 4 || strings.Count(labels, "tool:success") != 60 {
		t.Fatalf("%d compactions, %d tool results", compactions, strings.Count(labels, "tool:success"))
	}
	for i, r := range h.server.Requests() {
		if len(r.Body) > longWindow*4 {
			t.Fatalf("request %d is %d bytes, past the window", i, len(r.Body))
		}
	}
	checkConformant(t, h.bytes())
}

// The summary request of a context that does not fit the window is
// trimmed, longest tool results first, and still names every message.
func TestSummaryInputTrimmedToFit(t *testing.T) {
	long := strings.Repeat("x", 5000)
	short := strings.Repeat("y", 300)
	msgs := []session.Message{
		{Role: session.RoleUser, Content: new("task")},
		{Role: session.RoleTool, ToolCallID: "a", Content: &long},
		{Role: session.RoleTool, ToolCallID: "b", Content: &short},
	}
	out := trimSummaryInput(msgs, 2000)
	if contentSize(out) > 2000 || len(out) != 3 {
		t.Fatalf("size %d after trimming", contentSize(out))
	}
	if *out[2].Content != short || *out[0].Content != "task" || !strings.Contains(*out[1].Content, "characters left out") {
		t.Fatalf("trimmed the wrong message: %q / %q", *out[1].Content, *out[2].Content)
	}
	if *msgs[1].Content != long {
		t.Fatal("the state's message was changed in place")
	}
	if again := trimSummaryInput(msgs, 2000); *again[1].Content != *out[1].Content {
		t.Fatal("trimming is not deterministic")
	}
	if fits := trimSummaryInput(msgs, 100000); &fits[0] != &msgs[0] {
		t.Fatal("a fitting input was copied")
	}
}

// checkConformant validates every line against session.schema.json,
// reduces the file, and validates the reduced state against
// expected-state.schema.json.
func checkConformant(t *testing.T, data []byte) {
	t.Helper()
	dir := filepath.Join(conformance.Dir(t), "session", "schemas")
	c := jsonschema.NewCompiler()
	line, err := c.Compile(filepath.Join(dir, "session.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	state, err := c.Compile(filepath.Join(dir, "expected-state.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	validate := func(sch *jsonschema.Schema, text []byte) error {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
		if err != nil {
			return err
		}
		return sch.Validate(inst)
	}
	for i, l := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		if err := validate(line, l); err != nil {
			t.Fatalf("line %d is not valid under session.schema.json: %v", i+1, err)
		}
	}
	st, corrupt := session.Reduce(data)
	if corrupt != nil {
		t.Fatalf("does not reduce: %v", corrupt)
	}
	js, err := session.MarshalState(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(state, []byte(`{"ok":true,"state":`+string(js)+`}`)); err != nil {
		t.Fatalf("reduced state is not valid under expected-state.schema.json: %v", err)
	}
}
