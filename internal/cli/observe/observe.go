// Package observe is what a run shows and counts of its agent's events:
// the lifecycle projection (--json, tracing), the retry waits, the
// one-shot cost lines and /cost's totals. Display data, never a fact.
package observe

import (
	"fmt"
	"io"
	"sync/atomic"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/lifecycle"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/ui"
)

// EventObserver projects the agent's progress into lifecycle events. The
// agent calls it only after the settling fact is committed.
type EventObserver struct {
	SessionID func() string // the runner's session of the moment (a /rewind may switch it)
	Sink      lifecycle.Sink
}

func (o *EventObserver) op(opID string, kind session.OperationKind, recovery bool) lifecycle.Op {
	return lifecycle.Op{SessionID: o.SessionID(), OperationID: opID, Kind: kind, Recovery: recovery}
}

func (o *EventObserver) attempt(m agent.ModelInfo) lifecycle.ModelAttempt {
	return lifecycle.ModelAttempt{Op: o.op(m.OperationID, m.Kind, m.Recovery), StepID: m.StepID, AttemptID: m.AttemptID, Number: m.Attempt}
}

func (o *EventObserver) toolRun(t agent.ToolInfo) lifecycle.ToolRun {
	return lifecycle.ToolRun{
		Op:     o.op(t.OperationID, session.OperationRun, t.Recovery),
		StepID: t.StepID, AttemptID: t.ExecutionID, ParentAttemptID: t.ParentAttemptID,
		ToolStartedID: t.ToolStartedID, ToolCallID: t.ToolCallID, Tool: t.Tool,
	}
}

// event projects one agent event; display-only events have no projection.
func (o *EventObserver) Event(ev agent.Event) {
	switch ev := ev.(type) {
	case agent.OperationStarted:
		op := o.op(ev.OperationID, ev.Kind, ev.Recovery)
		if ev.Recovery {
			o.Sink.Emit(lifecycle.OperationRecovered(op))
			return
		}
		o.Sink.Emit(lifecycle.OperationStarted(op))
	case agent.ModelStarted:
		o.Sink.Emit(lifecycle.ModelStarted(o.attempt(ev.Model)))
	case agent.ModelCompleted:
		r := ev.Outcome
		var u *lifecycle.Usage
		if r.Usage != nil {
			v := lifecycle.Usage(*r.Usage)
			u = &v
		}
		o.Sink.Emit(lifecycle.ModelCompleted(o.attempt(ev.Model), r.Duration, lifecycle.Outcome(r.Outcome), u, r.ErrorType))
	case agent.ModelReconciled:
		o.Sink.Emit(lifecycle.ModelReconciled(o.attempt(ev.Model), lifecycle.Outcome(ev.Outcome.Outcome), ev.Outcome.ErrorType))
	case agent.ToolAdmitted:
		t := ev.Tool
		o.Sink.Emit(lifecycle.ToolAdmitted(o.op(t.OperationID, session.OperationRun, t.Recovery), t.StepID, t.ToolStartedID, t.ToolCallID, t.Tool, t.Replay))
	case agent.ToolStarted:
		o.Sink.Emit(lifecycle.ToolStarted(o.toolRun(ev.Tool)))
	case agent.ToolCompleted:
		o.Sink.Emit(lifecycle.ToolCompleted(o.toolRun(ev.Tool), ev.Outcome.Duration, lifecycle.Outcome(ev.Outcome.Outcome)))
	case agent.CancelRequested:
		o.Sink.Emit(lifecycle.CancelRequested(o.op(ev.OperationID, ev.Kind, ev.Recovery), ev.Phase, ev.ToolCallID))
	case agent.OperationCompleted:
		r, oo := ev.Result, ev.Outcome
		res := lifecycle.Result{
			Outcome:    lifecycle.OperationOutcome(r.Outcome),
			Completion: r.Completion,
			Answer:     r.Answer,
			Usage:      lifecycle.Usage(oo.Usage),
		}
		if r.Error != nil {
			res.ErrorType, res.ErrorMessage = r.Error.Code, r.Error.Message
		}
		o.Sink.Emit(lifecycle.OperationCompleted(o.op(r.OperationID, r.Kind, oo.Recovery), oo.Duration, res))
	}
}

// GatedObserver forwards events to inner while on is set.
type GatedObserver struct {
	Inner *ui.OneShot
	On    atomic.Bool
}

func (g *GatedObserver) Event(ev agent.Event) {
	if g.On.Load() {
		g.Inner.Event(ev)
	}
}

// RetryLines writes only the retry waits ("retrying in 4s: HTTP 429") to
// w: the one line --json mode shows besides its events.
func RetryLines(w io.Writer) func(agent.Event) {
	return func(ev agent.Event) {
		if r, ok := ev.(agent.ModelRetrying); ok {
			fmt.Fprintln(w, r.Wait.String())
		}
	}
}
