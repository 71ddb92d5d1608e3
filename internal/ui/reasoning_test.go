package ui

import (
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// Reasoning shows dimmed while it streams, collapses to one line when the
// answer starts, and never becomes part of the answer; the usage line
// carries the task's cost.
func TestReasoningDimmedThenCollapsed(t *testing.T) {
	h, eng := startedRun(t)
	h.send(modelStartedMsg{})
	h.send(reasoningMsg{text: "Let me look at "})
	h.send(reasoningMsg{text: "the files first."})
	live := h.m.View().Content
	if !strings.Contains(stripANSI(live), "Let me look at the files first.") {
		t.Fatalf("live view lacks the reasoning:\n%s", live)
	}
	if !strings.Contains(live, faint.Render("Let me look at the files first.")) {
		t.Errorf("reasoning is not dimmed:\n%q", live)
	}
	h.send(deltaMsg{text: "The answer."})
	if v := stripANSI(h.m.View().Content); strings.Contains(v, "Let me look") || !strings.Contains(v, "The answer.") {
		t.Errorf("after the answer started, live view:\n%s", v)
	}
	cost := 0.0123
	u := session.Usage{Input: 10, Output: 5}
	h.send(modelDoneMsg{outcome: agent.ModelOutcome{Outcome: "succeeded", Usage: &u, Cost: &cost}})
	h.send(opDoneMsg{outcome: agent.OperationOutcome{Usage: u}})
	eng.finish <- agent.Result{Outcome: session.OutcomeCompleted, Answer: "The answer."}
	h.until("the run to end", func() bool { return h.m.op == opNone })
	h.until("output", func() bool { return len(h.m.outbox) == 0 && !h.m.printing })
	out := stripANSI(h.output())
	if strings.Count(out, "Let me look at the files first.") != 1 || !strings.Contains(out, "✻ Thought (7 words): Let me look at the files first.") {
		t.Errorf("reasoning not collapsed to one line:\n%s", out)
	}
	if !strings.Contains(out, "$0.0123") {
		t.Errorf("no cost on the usage line:\n%s", out)
	}
	if i, j := strings.Index(out, "✻ Thought"), strings.Index(out, "The answer."); i < 0 || j < i {
		t.Errorf("the collapsed reasoning does not precede the answer:\n%s", out)
	}
}
