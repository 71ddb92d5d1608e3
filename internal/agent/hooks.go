package agent

// hooks are test seams that order the settlement and the abort at the
// commit point deterministically. Zero hooks do nothing.
type hooks struct {
	// BeforeSettle runs just before a settlement (model reply, tool result,
	// failure) reaches the commit point.
	BeforeSettle func()
	// AfterAbortCommitted runs after abortRequested is durable and before
	// the active phase is signalled.
	AfterAbortCommitted func()
	// BetweenPhases runs at the top of every planning iteration, when no
	// effect is active and no lock is held.
	BetweenPhases func()
}

func (h *hooks) betweenPhases() {
	if h.BetweenPhases != nil {
		h.BetweenPhases()
	}
}

func (h *hooks) beforeSettle() {
	if h.BeforeSettle != nil {
		h.BeforeSettle()
	}
}

func (h *hooks) afterAbortCommitted() {
	if h.AfterAbortCommitted != nil {
		h.AfterAbortCommitted()
	}
}
