package agent

import (
	"time"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// Observer sees what the agent does: lifecycle projections (called only
// after the fact that settles them is committed) and display-only progress.
// Implementations must not block for long and must not fail the run.
type Observer interface {
	OperationStarted(opID string, kind session.OperationKind, recovery bool)
	ModelStarted(m ModelInfo)
	// ModelDelta is streamed answer text, for display only.
	ModelDelta(text string)
	ModelCompleted(m ModelInfo, o ModelOutcome)
	// ModelReconciled reports an attempt of a dead process closed by
	// recovery.
	ModelReconciled(m ModelInfo, o ModelOutcome)
	ToolAdmitted(t ToolInfo)
	ToolStarted(t ToolInfo)
	ToolCompleted(t ToolInfo, o ToolOutcome)
	CancelRequested(opID string, kind session.OperationKind, phase session.Phase, toolCallID string, recovery bool)
	OperationCompleted(r Result, o OperationOutcome)
}

// ModelInfo identifies one model attempt.
type ModelInfo struct {
	OperationID string
	Kind        session.OperationKind
	StepID      string
	AttemptID   string
	Attempt     int
	Recovery    bool
}

// ModelOutcome is how an attempt ended. Outcome is "succeeded", "failed"
// or "cancelled".
type ModelOutcome struct {
	Outcome   string
	Duration  time.Duration
	Usage     *session.Usage
	ErrorType string
	// PromptTokens of the request, when known.
	PromptTokens int64
}

// ToolInfo identifies one tool execution.
type ToolInfo struct {
	OperationID     string
	StepID          string
	ToolStartedID   string
	ToolCallID      string
	Tool            string // model-facing name
	Display         string // human name
	Replay          string
	ExecutionID     string // new per execution (tool.started attemptId)
	ParentAttemptID string // the model attempt that asked for the call
	Recovery        bool
	// Arguments are for display only; never put them in events.
	Arguments string
}

// ToolOutcome is how a tool execution ended. Outcome is "succeeded",
// "failed" or "cancelled".
type ToolOutcome struct {
	Outcome  string
	Duration time.Duration
	// Content is the result text, for display only.
	Content string
}

// OperationOutcome accompanies OperationCompleted.
type OperationOutcome struct {
	Recovery bool
	Duration time.Duration
	Usage    session.Usage // usage of this operation
}

// NopObserver ignores everything.
type NopObserver struct{}

func (NopObserver) OperationStarted(string, session.OperationKind, bool) {}
func (NopObserver) ModelStarted(ModelInfo)                               {}
func (NopObserver) ModelDelta(string)                                    {}
func (NopObserver) ModelCompleted(ModelInfo, ModelOutcome)               {}
func (NopObserver) ModelReconciled(ModelInfo, ModelOutcome)              {}
func (NopObserver) ToolAdmitted(ToolInfo)                                {}
func (NopObserver) ToolStarted(ToolInfo)                                 {}
func (NopObserver) ToolCompleted(ToolInfo, ToolOutcome)                  {}
func (NopObserver) CancelRequested(string, session.OperationKind, session.Phase, string, bool) {
}
func (NopObserver) OperationCompleted(Result, OperationOutcome) {}

// Observers fans progress out to several observers, in order.
type Observers []Observer

var _ Observer = Observers(nil)

func (os Observers) OperationStarted(opID string, kind session.OperationKind, recovery bool) {
	for _, o := range os {
		o.OperationStarted(opID, kind, recovery)
	}
}
func (os Observers) ModelStarted(m ModelInfo) {
	for _, o := range os {
		o.ModelStarted(m)
	}
}
func (os Observers) ModelDelta(t string) {
	for _, o := range os {
		o.ModelDelta(t)
	}
}
func (os Observers) ModelCompleted(m ModelInfo, r ModelOutcome) {
	for _, o := range os {
		o.ModelCompleted(m, r)
	}
}
func (os Observers) ModelReconciled(m ModelInfo, r ModelOutcome) {
	for _, o := range os {
		o.ModelReconciled(m, r)
	}
}
func (os Observers) ToolAdmitted(t ToolInfo) {
	for _, o := range os {
		o.ToolAdmitted(t)
	}
}
func (os Observers) ToolStarted(t ToolInfo) {
	for _, o := range os {
		o.ToolStarted(t)
	}
}
func (os Observers) ToolCompleted(t ToolInfo, r ToolOutcome) {
	for _, o := range os {
		o.ToolCompleted(t, r)
	}
}
func (os Observers) CancelRequested(opID string, kind session.OperationKind, phase session.Phase, toolCallID string, recovery bool) {
	for _, o := range os {
		o.CancelRequested(opID, kind, phase, toolCallID, recovery)
	}
}
func (os Observers) OperationCompleted(r Result, oo OperationOutcome) {
	for _, o := range os {
		o.OperationCompleted(r, oo)
	}
}
