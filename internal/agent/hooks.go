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
