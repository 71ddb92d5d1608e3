package cli

import (
	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/lifecycle"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// eventObserver projects the agent's progress into lifecycle events. The
// agent calls it only after the settling fact is committed.
type eventObserver struct {
	sessionID string
	sink      lifecycle.Sink
}

var _ agent.Observer = (*eventObserver)(nil)

func (o *eventObserver) op(opID string, kind session.OperationKind, recovery bool) lifecycle.Op {
	return lifecycle.Op{SessionID: o.sessionID, OperationID: opID, Kind: kind, Recovery: recovery}
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

func (o *eventObserver) OperationStarted(opID string, kind session.OperationKind, recovery bool) {
	op := o.op(opID, kind, recovery)
	if recovery {
		o.sink.Emit(lifecycle.OperationRecovered(op))
		return
	}
	o.sink.Emit(lifecycle.OperationStarted(op))
}

func (o *eventObserver) ModelStarted(m agent.ModelInfo) {
	o.sink.Emit(lifecycle.ModelStarted(o.attempt(m)))
}

func (o *eventObserver) ModelDelta(string) {}

func (o *eventObserver) ModelCompleted(m agent.ModelInfo, r agent.ModelOutcome) {
	var u *lifecycle.Usage
	if r.Usage != nil {
		v := lifecycle.Usage(*r.Usage)
		u = &v
	}
	o.sink.Emit(lifecycle.ModelCompleted(o.attempt(m), r.Duration, lifecycle.Outcome(r.Outcome), u, r.ErrorType))
}

func (o *eventObserver) ModelReconciled(m agent.ModelInfo, r agent.ModelOutcome) {
	o.sink.Emit(lifecycle.ModelReconciled(o.attempt(m), lifecycle.Outcome(r.Outcome), r.ErrorType))
}

func (o *eventObserver) ToolAdmitted(t agent.ToolInfo) {
	o.sink.Emit(lifecycle.ToolAdmitted(o.op(t.OperationID, session.OperationRun, t.Recovery), t.StepID, t.ToolStartedID, t.ToolCallID, t.Tool, t.Replay))
}

func (o *eventObserver) ToolStarted(t agent.ToolInfo) {
	o.sink.Emit(lifecycle.ToolStarted(o.toolRun(t)))
}

func (o *eventObserver) ToolCompleted(t agent.ToolInfo, r agent.ToolOutcome) {
	o.sink.Emit(lifecycle.ToolCompleted(o.toolRun(t), r.Duration, lifecycle.Outcome(r.Outcome)))
}

func (o *eventObserver) CancelRequested(opID string, kind session.OperationKind, phase session.Phase, toolCallID string, recovery bool) {
	o.sink.Emit(lifecycle.CancelRequested(o.op(opID, kind, recovery), phase, toolCallID))
}

func (o *eventObserver) OperationCompleted(r agent.Result, oo agent.OperationOutcome) {
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
