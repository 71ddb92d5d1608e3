package agent

import "context"

// DefaultContextWindow applies when neither the configuration nor the
// endpoint's model list gives the model's window (runtime.md §4).
const DefaultContextWindow = 128000

// contextWindow resolves the window the first time it is needed: the
// configured figure, else AutoCompact.Lookup (asked once), else the
// default. Only the driving goroutine calls it.
func (a *Agent) contextWindow(ctx context.Context) int64 {
	if a.window > 0 {
		return a.window
	}
	ac := a.cfg.AutoCompact
	switch {
	case ac != nil && ac.ContextWindow > 0:
		a.window = ac.ContextWindow
	case ac != nil && ac.Lookup != nil:
		a.window = ac.Lookup(ctx)
	}
	if a.window <= 0 {
		a.window = DefaultContextWindow
	}
	return a.window
}

// overShare reports whether a prompt of this many tokens exceeded the
// configured share of the window; false when compaction is off.
func (a *Agent) overShare(ctx context.Context, promptTokens int64) bool {
	ac := a.cfg.AutoCompact
	if ac == nil || promptTokens <= 0 {
		return false
	}
	return float64(promptTokens) > ac.Share*float64(a.contextWindow(ctx))
}
