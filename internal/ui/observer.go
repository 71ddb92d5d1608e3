package ui

import (
	"sync"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// Observer implements agent.Observer for display: it forwards what the
// agent reports, from the agent's goroutine, to the UI that is attached
// (the Bubble Tea program in Run, a line printer in RunLines). Events
// while nothing is attached are dropped. Build the agent with it (alone or
// fanned out with other observers) and pass the same value in Options.
type Observer struct {
	mu   sync.Mutex
	sink func(any)
}

var _ agent.Observer = (*Observer)(nil)

// NewObserver returns a detached Observer. A nil *Observer is valid and
// ignores everything.
func NewObserver() *Observer { return &Observer{} }

// attach routes events to sink until the returned detach is called.
func (o *Observer) attach(sink func(any)) (detach func()) {
	if o == nil {
		return func() {}
	}
	o.mu.Lock()
	o.sink = sink
	o.mu.Unlock()
	return func() {
		o.mu.Lock()
		o.sink = nil
		o.mu.Unlock()
	}
}

func (o *Observer) send(msg any) {
	if o == nil {
		return
	}
	o.mu.Lock()
	sink := o.sink
	o.mu.Unlock()
	if sink != nil {
		sink(msg)
	}
}

// Events the observer forwards.
type (
	opStartedMsg struct {
		kind session.OperationKind
	}
	modelStartedMsg struct{}
	deltaMsg        struct{ text string }
	modelDoneMsg    struct{ outcome agent.ModelOutcome }
	toolStartedMsg  struct{ info agent.ToolInfo }
	toolDoneMsg     struct {
		info    agent.ToolInfo
		outcome agent.ToolOutcome
	}
	cancelRequestedMsg struct{}
	opDoneMsg          struct {
		result  agent.Result
		outcome agent.OperationOutcome
	}
)

func (o *Observer) OperationStarted(_ string, kind session.OperationKind, _ bool) {
	o.send(opStartedMsg{kind: kind})
}

func (o *Observer) ModelStarted(agent.ModelInfo) { o.send(modelStartedMsg{}) }

func (o *Observer) ModelDelta(text string) {
	if text != "" {
		o.send(deltaMsg{text: text})
	}
}

func (o *Observer) ModelCompleted(_ agent.ModelInfo, out agent.ModelOutcome) {
	o.send(modelDoneMsg{outcome: out})
}

// ModelReconciled is an attempt of a dead process: nothing was streamed
// here, so there is nothing to show.
func (o *Observer) ModelReconciled(agent.ModelInfo, agent.ModelOutcome) {}

// ToolAdmitted is followed by ToolStarted, which is what is shown.
func (o *Observer) ToolAdmitted(agent.ToolInfo) {}

func (o *Observer) ToolStarted(t agent.ToolInfo) { o.send(toolStartedMsg{info: t}) }

func (o *Observer) ToolCompleted(t agent.ToolInfo, out agent.ToolOutcome) {
	o.send(toolDoneMsg{info: t, outcome: out})
}

func (o *Observer) CancelRequested(string, session.OperationKind, session.Phase, string, bool) {
	o.send(cancelRequestedMsg{})
}

func (o *Observer) OperationCompleted(r agent.Result, out agent.OperationOutcome) {
	o.send(opDoneMsg{result: r, outcome: out})
}
