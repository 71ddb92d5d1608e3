package lifecycle

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Tracker forwards events to another sink and remembers the model and tool
// projections that are open (started, not yet completed). Shutdown ends
// them with outcome effect_unknown, as events.md requires on shutdown;
// nothing is written to the session for them.
type Tracker struct {
	mu    sync.Mutex
	inner Sink
	open  []Event // model.started and tool.started events, in start order
	done  bool
}

// NewTracker returns a Tracker forwarding to inner.
func NewTracker(inner Sink) *Tracker { return &Tracker{inner: inner} }

// Emit forwards e and updates the open set. Events after Shutdown are
// dropped: a late completion would contradict the effect_unknown already
// emitted.
func (t *Tracker) Emit(e Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return
	}
	switch e.Name {
	case NameModelStarted, NameToolStarted:
		t.open = append(t.open, e)
	case NameModelCompleted, NameToolCompleted:
		t.open = slices.DeleteFunc(t.open, func(o Event) bool { return closes(e, o) })
	}
	// Forwarding under the lock keeps the inner order equal to the
	// Tracker's order when several goroutines emit.
	t.inner.Emit(e)
}

// closes reports whether completion c ends the open projection o.
func closes(c, o Event) bool {
	switch c.Name {
	case NameModelCompleted:
		return o.Name == NameModelStarted && o.AttemptID == c.AttemptID && o.OperationID == c.OperationID
	case NameToolCompleted:
		return o.Name == NameToolStarted && o.AttemptID == c.AttemptID && o.ToolStartedID == c.ToolStartedID
	}
	return false
}

// Open returns the projections currently open, in start order.
func (t *Tracker) Open() []Event {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.open)
}

// Shutdown emits model.completed / tool.completed with outcome
// effect_unknown for every open projection, latest first, and then drops
// all further events. It is idempotent.
func (t *Tracker) Shutdown() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.done {
		return
	}
	t.done = true
	at := now()
	for _, o := range slices.Backward(t.open) {
		t.inner.Emit(effectUnknown(o, at))
	}
	t.open = nil
}

// Close runs Shutdown, then closes the inner sink.
func (t *Tracker) Close(ctx context.Context) error {
	t.Shutdown()
	return t.inner.Close(ctx)
}

// effectUnknown is the completion of the open projection o at time at.
func effectUnknown(o Event, at time.Time) Event {
	c := o
	switch o.Name {
	case NameModelStarted:
		c.Name = NameModelCompleted
	case NameToolStarted:
		c.Name = NameToolCompleted
	}
	c.Time = at
	c.DurationMs = max(0, at.Sub(o.Time).Milliseconds())
	c.Outcome = EffectUnknown
	c.Usage = nil
	c.ErrorType = ""
	return c
}
