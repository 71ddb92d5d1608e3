package agent

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// manyCalls is a reply asking for n bash calls, each creating a file.
func manyCalls(n int) providertest.Reply {
	r := providertest.Reply{FinishReason: "tool_calls"}
	for i := range n {
		r.ToolCalls = append(r.ToolCalls, call(fmt.Sprintf("c%d", i), "bash", fmt.Sprintf(`{"command":"touch f%d"}`, i)))
	}
	return r
}

// A reply with more tool calls than the limit runs none of them: the
// planner's one retry asks again, and a second such reply fails the step
// with a reason naming the flag.
func TestTooManyToolCallsRunNone(t *testing.T) {
	h := newHarness(t, []providertest.Reply{manyCalls(5), manyCalls(5)}, func(c *Config) { c.MaxToolCalls = 4 })
	res := h.run("go")
	if res.Outcome != session.OutcomeFailed || res.Error == nil || !strings.Contains(res.Error.Message, "--max-tool-calls") || !strings.Contains(res.Error.Message, "5 tool calls") {
		t.Fatalf("result = %+v", res)
	}
	want := "user runStarted stepAttempt:assistant stepAttempt:assistant stepFailed:model_error operationFinished:failed"
	if got := h.labels(); got != want {
		t.Fatalf("facts:\n got %s\nwant %s", got, want)
	}
	if n := len(h.server.Requests()); n != 2 {
		t.Fatalf("%d requests, want 2 (one retry)", n)
	}
	for i := range 5 {
		if _, err := os.Stat(h.path(fmt.Sprintf("f%d", i))); err == nil {
			t.Fatalf("call %d ran", i)
		}
	}
	if !h.reduce().Idle() {
		t.Fatal("not idle")
	}
}

// The retry that comes back within the limit goes on as usual, and a reply
// at exactly the limit runs every call.
func TestToolCallLimitRetryRecovers(t *testing.T) {
	h := newHarness(t, []providertest.Reply{manyCalls(5), manyCalls(4), {Text: "done"}}, func(c *Config) { c.MaxToolCalls = 4 })
	res := h.run("go")
	if res.Outcome != session.OutcomeCompleted || res.Answer != "done" {
		t.Fatalf("result = %+v", res)
	}
	for i := range 4 {
		if _, err := os.Stat(h.path(fmt.Sprintf("f%d", i))); err != nil {
			t.Fatalf("call %d did not run: %v", i, err)
		}
	}
	if _, err := os.Stat(h.path("f4")); err == nil {
		t.Fatal("a call of the refused reply ran")
	}
}

// The default limit is 64.
func TestDefaultToolCallLimit(t *testing.T) {
	h := newHarness(t, []providertest.Reply{manyCalls(DefaultMaxToolCalls + 1), manyCalls(DefaultMaxToolCalls + 1)})
	res := h.run("go")
	if res.Outcome != session.OutcomeFailed || !strings.Contains(res.Error.Message, "limit of 64") {
		t.Fatalf("result = %+v", res)
	}
}
