package observe

import (
	"fmt"
	"io"
	"sync"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/ui"
)

// CostLog writes, in one-shot mode, the price of each model request and of
// each operation on stderr when the provider reports one (OpenRouter's
// usage accounting) or a price table knows it (Anthropic's list prices):
// "  $0.0041 2.4k in · 40 out · 42% cached" per request and "cost $0.0123 for
// 3 requests" per operation. Cost is display data: it is never a fact.
type CostLog struct {
	mu       sync.Mutex
	w        io.Writer
	sum      float64
	priced   int
	requests int
}

// NewCostLog is a CostLog writing to w.
func NewCostLog(w io.Writer) *CostLog { return &CostLog{w: w} }

func (c *CostLog) Event(ev agent.Event) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch ev := ev.(type) {
	case agent.OperationStarted:
		c.sum, c.priced, c.requests = 0, 0, 0
	case agent.ModelCompleted:
		if ev.Outcome.Usage == nil {
			return
		}
		c.requests++
		if ev.Outcome.Cost == nil {
			return
		}
		c.sum += *ev.Outcome.Cost
		c.priced++
		fmt.Fprintf(c.w, "  $%.4f %s%s\n", *ev.Outcome.Cost, ui.UsageLine(*ev.Outcome.Usage, 0, 0), reasoningPart(ev.Outcome.ReasoningTokens))
	case agent.OperationCompleted:
		if c.priced > 0 {
			fmt.Fprintf(c.w, "cost $%.4f for %d request(s)%s\n", c.sum, c.requests, unpriced(c.requests-c.priced))
		}
	}
}

// reasoningPart names the output tokens spent reasoning, when reported.
func reasoningPart(n int64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d reasoning)", n)
}

func unpriced(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d without a reported cost)", n)
}

// SessionCost adds up what the model requests of this session cost, as
// far as the provider reports it (display data, never a fact).
type SessionCost struct {
	Mu       sync.Mutex
	sum      float64
	priced   int
	requests int
	// window is the context window of the last request, as the footer's
	// "% of window" has it, for /status to say the same.
	Window int64
}

func (c *SessionCost) Event(ev agent.Event) {
	mc, ok := ev.(agent.ModelCompleted)
	if !ok || mc.Outcome.Usage == nil {
		return
	}
	c.Mu.Lock()
	defer c.Mu.Unlock()
	c.requests++
	if mc.Outcome.ContextWindow > 0 {
		c.Window = mc.Outcome.ContextWindow
	}
	if mc.Outcome.Cost != nil {
		c.sum += *mc.Outcome.Cost
		c.priced++
	}
}

// Reset starts the count again (a /clear or /resume).
func (c *SessionCost) Reset() {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	c.sum, c.priced, c.requests = 0, 0, 0
}

// Summary is /cost's line.
func (c *SessionCost) Summary() string {
	c.Mu.Lock()
	defer c.Mu.Unlock()
	switch {
	case c.requests == 0:
		return "no model requests since this session was opened here"
	case c.priced == 0:
		return fmt.Sprintf("not reported by the provider (%d requests since this session was opened here)", c.requests)
	}
	return fmt.Sprintf("$%.4f for %d request(s) since this session was opened here%s", c.sum, c.requests, unpriced(c.requests-c.priced))
}
