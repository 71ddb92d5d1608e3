package observe

import (
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/session"
)

func completed(cost *float64, window int64) agent.ModelCompleted {
	var mc agent.ModelCompleted
	mc.Outcome.Usage = &session.Usage{Input: 2400, Output: 40}
	mc.Outcome.Cost = cost
	mc.Outcome.ContextWindow = window
	return mc
}

func price(v float64) *float64 { return &v }

// /cost counts every request, adds up only the priced ones and says how
// many had no price; Reset starts again.
func TestSessionCostSummary(t *testing.T) {
	var c SessionCost
	if got := c.Summary(); !strings.HasPrefix(got, "no model requests") {
		t.Fatalf("empty: %q", got)
	}
	c.Event(completed(nil, 0))
	if got := c.Summary(); !strings.HasPrefix(got, "not reported by the provider (1 requests") {
		t.Fatalf("unpriced: %q", got)
	}
	c.Event(completed(price(0.0041), 200000))
	c.Event(completed(price(0.0002), 0))
	got := c.Summary()
	if !strings.HasPrefix(got, "$0.0043 for 3 request(s)") || !strings.Contains(got, "(1 without a reported cost)") {
		t.Fatalf("mixed: %q", got)
	}
	if c.Window != 200000 {
		t.Fatalf("window %d, want the last reported 200000", c.Window)
	}
	c.Reset()
	if got := c.Summary(); !strings.HasPrefix(got, "no model requests") {
		t.Fatalf("after Reset: %q", got)
	}
}

// One-shot's cost lines: one per priced request, and a total per
// operation only when something was priced.
func TestCostLogLines(t *testing.T) {
	var b strings.Builder
	l := NewCostLog(&b)
	l.Event(agent.OperationStarted{})
	l.Event(completed(price(0.0041), 0))
	l.Event(completed(nil, 0))
	l.Event(agent.OperationCompleted{})
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "  $0.0041 ") || lines[1] != "cost $0.0041 for 2 request(s) (1 without a reported cost)" {
		t.Fatalf("cost lines:\n%s", b.String())
	}
	b.Reset()
	l.Event(agent.OperationStarted{})
	l.Event(completed(nil, 0))
	l.Event(agent.OperationCompleted{})
	if b.Len() != 0 {
		t.Fatalf("an operation with no price printed %q", b.String())
	}
}
