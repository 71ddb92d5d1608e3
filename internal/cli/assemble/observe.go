package assemble

import (
	"fmt"
	"io"
	"sync/atomic"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/lifecycle"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/ui"
)

// eventObserver projects the agent's progress into lifecycle events. The
// agent calls it only after the settling fact is committed.
type eventObserver struct {
	sessionID func() string // the runner's session of the moment (a /rewind may switch it)
	sink      lifecycle.Sink
}

func (o *eventObserver) op(opID string, kind session.OperationKind, recovery bool) lifecycle.Op {
	return lifecycle.Op{SessionID: o.sessionID(), OperationID: opID, Kind: kind, Recovery: recovery}
}

func (o *eventObserver) attempt(m agent.ModelInfo) lifecycle.ModelAttempt {
	return lifecycle.ModelAttempt{Op: o.op(m.OperationID, m.Kind, m.Recovery), StepID: m.StepID, AttemptID: m.AttemptID, Number: m.Attempt}
}

func (o *eventObserver) toolRun(t agent.ToolInfo) lifecycle.ToolRun {
	return lifecycle.ToolRun{
		Op:     o.op(t.OperationID, session.OperationRun, t.Recovery),
		StepID: t.StepID, AttemptID: t.ExecutionID, ParentAttemptID: t.ParentAttemptID,
		ToolStartedID: t.ToolStartedID, ToolCallID: t.ToolCallID, Tool: t.Tool,
	}
}

// event projects one agent event; display-only events have no projection.
func (o *eventObserver) event(ev agent.Event) {
	switch ev := ev.(type) {
	case agent.OperationStarted:
		op := o.op(ev.OperationID, ev.Kind, ev.Recovery)
		if ev.Recovery {
			o.sink.Emit(lifecycle.OperationRecovered(op))
			return
		}
		o.sink.Emit(lifecycle.OperationStarted(op))
	case agent.ModelStarted:
		o.sink.Emit(lifecycle.ModelStarted(o.attempt(ev.Model)))
	case agent.ModelCompleted:
		r := ev.Outcome
		var u *lifecycle.Usage
		if r.Usage != nil {
			v := lifecycle.Usage(*r.Usage)
			u = &v
		}
		o.sink.Emit(lifecycle.ModelCompleted(o.attempt(ev.Model), r.Duration, lifecycle.Outcome(r.Outcome), u, r.ErrorType))
	case agent.ModelReconciled:
		o.sink.Emit(lifecycle.ModelReconciled(o.attempt(ev.Model), lifecycle.Outcome(ev.Outcome.Outcome), ev.Outcome.ErrorType))
	case agent.ToolAdmitted:
		t := ev.Tool
		o.sink.Emit(lifecycle.ToolAdmitted(o.op(t.OperationID, session.OperationRun, t.Recovery), t.StepID, t.ToolStartedID, t.ToolCallID, t.Tool, t.Replay))
	case agent.ToolStarted:
		o.sink.Emit(lifecycle.ToolStarted(o.toolRun(ev.Tool)))
	case agent.ToolCompleted:
		o.sink.Emit(lifecycle.ToolCompleted(o.toolRun(ev.Tool), ev.Outcome.Duration, lifecycle.Outcome(ev.Outcome.Outcome)))
	case agent.CancelRequested:
		o.sink.Emit(lifecycle.CancelRequested(o.op(ev.OperationID, ev.Kind, ev.Recovery), ev.Phase, ev.ToolCallID))
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
		o.sink.Emit(lifecycle.OperationCompleted(o.op(r.OperationID, r.Kind, oo.Recovery), oo.Duration, res))
	}
}

// gatedObserver forwards events to inner while on is set.
type gatedObserver struct {
	Inner *ui.OneShot
	On    atomic.Bool
}

func (g *gatedObserver) event(ev agent.Event) {
	if g.On.Load() {
		g.Inner.Event(ev)
	}
}

// retryLines writes only the retry waits ("retrying in 4s: HTTP 429") to
// w: the one line --json mode shows besides its events.
func retryLines(w io.Writer) func(agent.Event) {
	return func(ev agent.Event) {
		if r, ok := ev.(agent.ModelRetrying); ok {
			fmt.Fprintln(w, r.Wait.String())
		}
	}
}
