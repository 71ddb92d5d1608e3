package cli

import (
	"fmt"
	"io"
	"sync"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/ui"
)

// costLog writes, in one-shot mode, the price of each model request and of
// each operation on stderr when the provider reports one (OpenRouter's
// usage accounting) or a price table knows it (Anthropic's list prices):
// "  $0.0041 2.4k in · 40 out · 42% cached" per request and "cost $0.0123 for
// 3 requests" per operation. Cost is display data: it is never a fact.
type costLog struct {
	mu       sync.Mutex
	w        io.Writer
	sum      float64
	priced   int
	requests int
}

func newCostLog(w io.Writer) *costLog { return &costLog{w: w} }

func (c *costLog) event(ev agent.Event) {
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
