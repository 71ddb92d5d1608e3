package ui

import (
	"fmt"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// usageMeter adds up what the usage line shows for one user operation:
// the tokens of its model requests, their cost when it is known, and the
// prompt of the last request against the context window (how full the
// conversation is now).
type usageMeter struct {
	total      session.Usage
	lastPrompt int64
	window     int64   // 0: unknown
	cost       float64 // US dollars, of the requests whose cost is known
	costed     bool    // some request's cost is known
}

// step notes a model attempt's outcome. The prompt of the last assistant
// step that succeeded is how full the conversation is now; a failed
// attempt or a summary request (no window) leaves that as it was.
func (u *usageMeter) step(o agent.ModelOutcome) {
	if o.Outcome == "succeeded" && o.ContextWindow > 0 && o.PromptTokens > 0 {
		u.lastPrompt, u.window = o.PromptTokens, o.ContextWindow
	}
	if o.Cost != nil {
		u.cost += *o.Cost
		u.costed = true
	}
}

// operation adds an agent operation's usage (a run may hold a compaction
// and the run itself).
func (u *usageMeter) operation(x session.Usage) { u.total = addUsage(u.total, x) }

// reset starts a new user operation; the window share carries over.
func (u *usageMeter) reset() { *u = usageMeter{lastPrompt: u.lastPrompt, window: u.window} }

func (u usageMeter) zero() bool { return zeroUsage(u.total) }

// line is e.g. "12.3k in · 850 out · 83% cached · 41% of window · $0.021":
// "in" is the whole prompt (uncached input, cache reads and cache writes,
// as runtime.md normalizes them), "cached" the share of it read from the
// cache (floored, so 100% means all of it), "of window" the last
// request's prompt against the model's context window, and the cost is
// shown when the provider reported it.
func (u usageMeter) line() string {
	in := promptTokens(u.total)
	parts := []string{tokens(in) + " in", tokens(u.total.Output) + " out"}
	if u.total.CacheRead > 0 {
		parts = append(parts, fmt.Sprintf("%d%% cached", cacheRate(u.total)))
	}
	if u.window > 0 && u.lastPrompt > 0 {
		parts = append(parts, fmt.Sprintf("%d%% of window", u.lastPrompt*100/u.window))
	}
	if u.costed {
		parts = append(parts, dollars(u.cost))
	}
	return strings.Join(parts, " · ")
}

// tokens is a count people read at a glance: 850, 12.3k, 1.2M.
func tokens(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 999_950:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/1000)) + "k"
	default:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/1e6)) + "M"
	}
}

// dollars is a cost in cents above a dollar, to a hundredth of a cent
// below.
func dollars(c float64) string {
	if c >= 1 {
		return fmt.Sprintf("$%.2f", c)
	}
	return fmt.Sprintf("$%.4f", c)
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }

func promptTokens(u session.Usage) int64 { return u.Input + u.CacheRead + u.CacheWrite }

func cacheRate(u session.Usage) int64 {
	total := promptTokens(u)
	if total <= 0 {
		return 0
	}
	return u.CacheRead * 100 / total
}
