package lifecycle

import (
	"context"
	"sync"
	"testing"
	"time"
)

// recorder is a Sink that keeps every event.
type recorder struct {
	mu     sync.Mutex
	events []Event
	closed bool
}

func (r *recorder) Emit(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) Close(context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	return nil
}

func (r *recorder) names() []Name {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ns []Name
	for _, e := range r.events {
		ns = append(ns, e.Name)
	}
	return ns
}

func TestTrackerClosesOpenProjectionsAsEffectUnknown(t *testing.T) {
	rec := &recorder{}
	tr := NewTracker(rec)
	start := time.Now().Add(-1500 * time.Millisecond)

	// A finished model attempt: must not be closed again.
	tr.Emit(ModelStarted(testAtt).At(start))
	tr.Emit(ModelCompleted(testAtt, time.Second, Succeeded, &Usage{Input: 1}, ""))
	// A finished tool: likewise.
	done := testRun
	done.AttemptID, done.ToolStartedID = "tat0", "ts0"
	tr.Emit(ToolStarted(done).At(start))
	tr.Emit(ToolCompleted(done, time.Second, Succeeded))
	// Open: a second model attempt and a tool of it.
	att2 := ModelAttempt{Op: testOp, StepID: "st2", AttemptID: "at2", Number: 1}
	tr.Emit(ModelStarted(att2).At(start))
	open := testRun
	open.ParentAttemptID = "at2"
	tr.Emit(ToolStarted(open).At(start))

	if n := len(tr.Open()); n != 2 {
		t.Fatalf("Open() has %d projections, want 2", n)
	}
	if err := tr.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	tr.Emit(ToolCompleted(open, time.Second, Succeeded)) // late: dropped
	tr.Shutdown()                                        // idempotent

	evs := rec.events
	if len(evs) != 8 {
		t.Fatalf("got %v, want 6 forwarded + 2 effect_unknown", rec.names())
	}
	tool, model := evs[6], evs[7]
	if tool.Name != NameToolCompleted || model.Name != NameModelCompleted {
		t.Fatalf("closing order %s, %s; want tool then model (latest first)", tool.Name, model.Name)
	}
	if tool.Outcome != EffectUnknown || model.Outcome != EffectUnknown {
		t.Errorf("outcomes %s, %s", tool.Outcome, model.Outcome)
	}
	if tool.ToolStartedID != "ts1" || tool.AttemptID != "tat1" || tool.ParentAttemptID != "at2" || tool.Tool != "read" || tool.ToolCallID != "call1" {
		t.Errorf("tool completion lost tool.started fields: %+v", tool)
	}
	if model.AttemptID != "at2" || model.StepID != "st2" || model.OperationID != "op1" || model.Usage != nil {
		t.Errorf("model completion: %+v", model)
	}
	for _, e := range []Event{tool, model} {
		if e.DurationMs < 1500 || e.DurationMs > 60_000 {
			t.Errorf("%s durationMs = %d, want about 1500", e.Name, e.DurationMs)
		}
		if _, err := MarshalLine(e); err != nil {
			t.Errorf("%s does not encode: %v", e.Name, err)
		}
	}
	if !rec.closed {
		t.Error("inner sink not closed")
	}
}

func TestTrackerNothingOpen(t *testing.T) {
	rec := &recorder{}
	tr := NewTracker(rec)
	tr.Emit(OperationStarted(testOp))
	tr.Emit(ModelStarted(testAtt))
	tr.Emit(ModelCompleted(testAtt, 0, Failed, nil, "model_error"))
	tr.Emit(OperationCompleted(testOp, 0, Result{Outcome: Failed}))
	tr.Shutdown()
	if len(rec.events) != 4 {
		t.Errorf("got %v", rec.names())
	}
}
