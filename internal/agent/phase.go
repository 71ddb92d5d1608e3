package agent

import (
	"context"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// A phase is the span in which one effect runs (a model request, an
// approval wait, hooks, a tool): while it is active an Abort cancels its
// context, and the abortRequested record names it. Entering a phase writes
// nothing; the facts around it are committed by the step (commit).

// activePhase is the effect currently running, with the means to stop it.
type activePhase struct {
	phase      session.Phase
	toolCallID string
	cancel     context.CancelFunc
}

// enter makes a phase active and returns the context its effect runs
// with. ok is false, and nothing is active, when an abort became durable
// first (an Abort already waiting goes first): the effect must not start,
// and the planner reconciles the abort.
func (a *Agent) enter(ctx context.Context, phase session.Phase, toolCallID string) (ap *activePhase, pctx context.Context, ok bool) {
	pctx, cancel := context.WithCancel(ctx)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.letAbortsGoFirst()
	if abortIsDurable(a.cfg.Log.State().Operation) {
		cancel()
		return nil, nil, false
	}
	a.active = &activePhase{phase: phase, toolCallID: toolCallID, cancel: cancel}
	return a.active, pctx, true
}

// end ends the effect of ap: nothing is active any more.
func (a *Agent) end(ap *activePhase) {
	a.mu.Lock()
	if a.active == ap {
		a.active = nil
	}
	a.mu.Unlock()
	ap.cancel()
}

// letAbortsGoFirst waits (under mu) until no Abort is waiting for mu, so
// an Esc that arrives during a commit is never overtaken by the next
// commit or effect.
func (a *Agent) letAbortsGoFirst() {
	for a.abortsWaiting.Load() > 0 {
		a.abortDone.Wait()
	}
}

// abortDurable reports whether the open operation has a committed abort.
func (a *Agent) abortDurable() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return abortIsDurable(a.cfg.Log.State().Operation)
}
