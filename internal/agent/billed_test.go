package agent

import (
	"os"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// Tokens of a reply that failed or was cut off are billed, so they are
// recorded: a usage fact owned by the failed attempt, in the same
// transaction as stepFailed.
func TestFailedRepliesRecordTheirUsage(t *testing.T) {
	usage := &providertest.Usage{PromptTokens: 1000, CompletionTokens: 4096}
	for _, c := range []struct {
		name  string
		reply providertest.Reply
	}{
		{"cut off text", providertest.Reply{Text: "partial", FinishReason: "length", Usage: usage}},
		{"declined", providertest.Reply{Text: "I started", FinishReason: "content_filter", Usage: usage}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, []providertest.Reply{c.reply})
			res := h.run("go")
			if res.Outcome != session.OutcomeFailed {
				t.Fatalf("result = %+v", res)
			}
			want := "user runStarted stepAttempt:assistant usage stepFailed:model_error operationFinished:failed"
			if got := h.labels(); got != want {
				t.Fatalf("facts:\n got %s\nwant %s", got, want)
			}
			if u := h.reduce().Usage; u.Input != 1000 || u.Output != 4096 {
				t.Fatalf("session usage %+v", u)
			}
		})
	}
}

// A reply cut off while calling tools runs none of them: each gets the
// synthetic truncated result and the run completes "truncated", with the
// reply's usage recorded.
func TestCutOffCallsAreNotRun(t *testing.T) {
	h := newHarness(t, []providertest.Reply{{
		ToolCalls:    []providertest.ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"touch ran"}`}},
		FinishReason: "length", Usage: &providertest.Usage{PromptTokens: 10, CompletionTokens: 20},
	}})
	res := h.run("go")
	if res.Outcome != session.OutcomeCompleted || res.Completion != session.CompletionTruncated {
		t.Fatalf("result = %+v", res)
	}
	if _, err := os.Stat(h.path("ran")); err == nil {
		t.Fatal("a cut-off call ran")
	}
	if u := h.reduce().Usage; u.Output != 20 {
		t.Fatalf("usage %+v", u)
	}
}
