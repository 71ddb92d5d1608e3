package agent

import (
	"time"

	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// Event is one thing the agent reports: a lifecycle projection, delivered
// only after the fact that settles it is committed, or display-only
// progress. Consumers type-switch on the concrete types below and ignore
// the ones they do not know, so a new kind of event changes only the
// agent and the consumers that care about it. Sinks must not block for
// long and cannot fail the run.
type Event interface{ agentEvent() }

// Events of an operation, in the order a run produces them.
type (
	// OperationStarted: runStarted or compactionStarted committed, or an
	// open operation taken up by recovery (Recovery true).
	OperationStarted struct {
		OperationID string
		Kind        session.OperationKind
		Recovery    bool
	}
	// ModelStarted: a stepAttempt committed.
	ModelStarted struct{ Model ModelInfo }
	// ModelDelta is streamed answer text, for display only.
	ModelDelta struct{ Text string }
	// ModelReasoningDelta is streamed reasoning (thinking) text, for
	// display only: never part of the answer.
	ModelReasoningDelta struct{ Text string }
	// ModelRetrying: the request of the open attempt brought back no reply
	// and is sent again after Wait.Delay (runtime.md §1). Display only: the
	// wait is part of the model phase, and Esc ends it.
	ModelRetrying struct {
		Model ModelInfo
		Wait  provider.RetryWait
	}
	// ModelCompleted: the attempt settled (reply entry or stepFailed).
	ModelCompleted struct {
		Model   ModelInfo
		Outcome ModelOutcome
	}
	// ModelReconciled: recovery closed an attempt of a dead process.
	ModelReconciled struct {
		Model   ModelInfo
		Outcome ModelOutcome
	}
	// ToolAdmitted: toolStarted committed (not on replay).
	ToolAdmitted struct{ Tool ToolInfo }
	// ToolStarted: this process starts the effect.
	ToolStarted struct{ Tool ToolInfo }
	// ToolCompleted: the result entry committed.
	ToolCompleted struct {
		Tool    ToolInfo
		Outcome ToolOutcome
	}
	// CancelRequested: abortRequested committed.
	CancelRequested struct {
		OperationID string
		Kind        session.OperationKind
		Phase       session.Phase
		ToolCallID  string
		Recovery    bool
	}
	// OperationCompleted: operationFinished committed.
	OperationCompleted struct {
		Result  Result
		Outcome OperationOutcome
	}
)

func (OperationStarted) agentEvent()    {}
func (ModelStarted) agentEvent()        {}
func (ModelDelta) agentEvent()          {}
func (ModelReasoningDelta) agentEvent() {}
func (ModelRetrying) agentEvent()       {}
func (ModelCompleted) agentEvent()      {}
func (ModelReconciled) agentEvent()     {}
func (ToolAdmitted) agentEvent()        {}
func (ToolStarted) agentEvent()         {}
func (ToolCompleted) agentEvent()       {}
func (CancelRequested) agentEvent()     {}
func (OperationCompleted) agentEvent()  {}

// Fanout returns a sink that hands every event to each non-nil sink, in
// order.
func Fanout(sinks ...func(Event)) func(Event) {
	var live []func(Event)
	for _, s := range sinks {
		if s != nil {
			live = append(live, s)
		}
	}
	return func(ev Event) {
		for _, s := range live {
			s(ev)
		}
	}
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
	// Cost of the request in US dollars when the provider reported it or
	// a price table knows it; display data only, never a fact.
	Cost *float64
	// ContextWindow of the model, set with PromptTokens on an assistant
	// step, so a display can show the share of the window in use.
	ContextWindow int64
	// ReasoningTokens is the part of the output spent reasoning, when the
	// provider reports it (display data).
	ReasoningTokens int64
	// Sources are the pages the provider's own web search cited in the
	// reply (display data).
	Sources []provider.Source
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
	// Partial is, for a call the user interrupted while it ran, what it
	// had printed by then (the model gets the contract's fixed text in
	// Content); Duration is how long it ran. Display only.
	Partial string
}

// OperationOutcome accompanies OperationCompleted.
type OperationOutcome struct {
	Recovery bool
	Duration time.Duration
	Usage    session.Usage // usage of this operation
}
