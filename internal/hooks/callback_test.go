package hooks

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/agent"
)

// A callback hook added while the runner runs decides as a command hook
// would: it gets the input JSON, its deny denies with its reason, and
// only calls its matcher matches reach it.
func TestCallbackHookDenies(t *testing.T) {
	r, _ := testRunner(t, `{}`, false)
	var inputs []string
	h, err := NewCallbackHook(PreToolUse, "Bash", 0, "SDK hook callback hook_0", "the Agent SDK", func(ctx context.Context, in []byte) ([]byte, error) {
		inputs = append(inputs, string(in))
		return []byte(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no shell"}}`), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Any(PreToolUse) {
		t.Fatal("hooks before Add")
	}
	r.Add(h)
	dec, err := r.BeforeTool(context.Background(), agent.HookCall{Key: "a/c1", ToolCallID: "c1", Tool: "bash", Arguments: []byte(`{"command":"ls"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if dec.Decision != agent.DecisionDeny || dec.Reason != "no shell" {
		t.Errorf("decision %+v; want the callback's deny", dec)
	}
	if len(inputs) != 1 || !strings.Contains(inputs[0], `"tool_name":"Bash"`) || !strings.Contains(inputs[0], `"command":"ls"`) {
		t.Errorf("the callback got %q", inputs)
	}
	dec, _ = r.BeforeTool(context.Background(), agent.HookCall{Key: "a/c2", ToolCallID: "c2", Tool: "write", Arguments: []byte(`{"path":"x","content":"y"}`)})
	if dec.Decision != "" || len(inputs) != 1 {
		t.Errorf("a Write call: decision %+v, %d callback calls; want none", dec, len(inputs))
	}
}

// A callback that fails or does not answer in time is a failed hook: not
// blocking unless fail-closed.
func TestCallbackHookFails(t *testing.T) {
	for _, closed := range []bool{false, true} {
		r, _ := testRunner(t, `{}`, closed)
		fail, _ := NewCallbackHook(PreToolUse, "", 0, "failing", "t", func(context.Context, []byte) ([]byte, error) { return nil, errors.New("boom") })
		slow, _ := NewCallbackHook(PreToolUse, "", 50*time.Millisecond, "slow", "t", func(ctx context.Context, _ []byte) ([]byte, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
		r.Add(fail, slow)
		dec, err := r.BeforeTool(context.Background(), agent.HookCall{Key: "a/c1", ToolCallID: "c1", Tool: "bash", Arguments: []byte(`{"command":"ls"}`)})
		if err != nil {
			t.Fatal(err)
		}
		if (dec.Decision == agent.DecisionDeny) != closed || (closed && (!strings.Contains(dec.Reason, "boom") || !strings.Contains(dec.Reason, "did not answer"))) {
			t.Errorf("fail closed %v: decision %+v", closed, dec)
		}
	}
	if _, err := NewCallbackHook("NoSuchEvent", "", 0, "x", "t", nil); err == nil {
		t.Error("an unknown event was accepted")
	}
}
