package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// retrying429 is the event the agent sends when a request got HTTP 429
// with Retry-After: 1.
var retrying429 = agent.ModelRetrying{Wait: provider.RetryWait{Send: 1, Delay: time.Second, Err: &provider.Error{Status: 429}}}

// statusLine is the live area's status line (the spinner's), or "".
func (h *harness) statusLine() string {
	for _, l := range strings.Split(stripANSI(h.m.View().Content), "\n") {
		if strings.Contains(l, "· Esc aborts") {
			return l
		}
	}
	return ""
}

// TestRetryWaitIsTheStatusLine: while a request waits to be sent again
// the status line says so ("retrying in 1s: HTTP 429"), and once the
// reply arrives it is replaced, whatever the reply starts with; the wait
// is not printed into the scrollback.
func TestRetryWaitIsTheStatusLine(t *testing.T) {
	replies := []struct {
		name  string
		reply any
		want  string
	}{
		{"text", deltaMsg{text: "the answer"}, "Writing…"},
		{"reasoning", reasoningMsg{text: "let me think"}, "Thinking…"},
		{"tool calls", modelDoneMsg{outcome: agent.ModelOutcome{Outcome: "succeeded"}}, "Working…"},
	}
	for _, r := range replies {
		t.Run(r.name, func(t *testing.T) {
			h, eng := startedRun(t)
			obs := eng.obs
			obs.Event(agent.ModelStarted{Model: agent.ModelInfo{Kind: session.OperationRun}})
			obs.Event(retrying429)
			h.until("the retry line", func() bool { return strings.Contains(h.statusLine(), "retrying in 1s: HTTP 429 · Esc aborts") })
			h.send(r.reply)
			if l := h.statusLine(); strings.Contains(l, "retrying") || !strings.Contains(l, r.want) {
				t.Fatalf("after the reply began, status line %q, want %q", l, r.want)
			}
			eng.finish <- agent.Result{Outcome: session.OutcomeCompleted, Answer: "done"}
			h.until("the run to end", func() bool { return h.m.op == opNone })
			h.until("output", func() bool { return len(h.m.outbox) == 0 && !h.m.printing })
			if out := stripANSI(h.output()); strings.Contains(out, "retrying") {
				t.Fatalf("the wait went into the scrollback:\n%s", out)
			}
			if v := stripANSI(h.m.View().Content); strings.Contains(v, "retrying") {
				t.Fatalf("the wait is still shown:\n%s", v)
			}
		})
	}
}

// TestRetryWaitCountsDown: the status line counts the wait down to the
// next send, then says the request was sent again and for how long, until
// the reply replaces it.
func TestRetryWaitCountsDown(t *testing.T) {
	h, eng := startedRun(t)
	obs := eng.obs
	obs.Event(agent.ModelStarted{Model: agent.ModelInfo{Kind: session.OperationRun}})
	start := time.Now()
	h.m.now = func() time.Time { return start }
	obs.Event(agent.ModelRetrying{Wait: provider.RetryWait{Send: 2, Delay: 5 * time.Second, Err: &provider.Error{Status: 503}}})
	h.until("the retry line", func() bool { return strings.Contains(h.statusLine(), "retrying in 5s: HTTP 503") })
	for _, step := range []struct {
		after time.Duration
		want  string
	}{
		{1500 * time.Millisecond, "retrying in 4s: HTTP 503 · Esc aborts"},
		{4900 * time.Millisecond, "retrying in 1s: HTTP 503 · Esc aborts"},
		{5 * time.Second, "Sending again after HTTP 503… 0s · Esc aborts"},
		{8 * time.Second, "Sending again after HTTP 503… 3s · Esc aborts"},
	} {
		at := start.Add(step.after)
		h.m.now = func() time.Time { return at }
		if l := h.statusLine(); !strings.Contains(l, step.want) {
			t.Errorf("%v into the wait: status line %q, want %q", step.after, l, step.want)
		}
	}
	h.send(deltaMsg{text: "the answer"})
	if l := h.statusLine(); !strings.Contains(l, "Writing… 0s") {
		t.Errorf("after the reply began: status line %q", l)
	}
}
