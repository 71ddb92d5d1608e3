package ui

import (
	"sync"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// Observer is the display's agent event sink: it forwards what the
// agent reports, from the agent's goroutine, to the UI that is attached
// (the Bubble Tea program in Run, a line printer in RunLines). Events
// while nothing is attached are dropped. Build the agent with it (alone or
// fanned out with other observers) and pass the same value in Options.
type Observer struct {
	mu   sync.Mutex
	sink func(any)
	log  toolLog
}

// NewObserver returns a detached Observer; the paths of write and edit
// calls, whose diffs the tool log shows, are relative to workDir. A nil
// *Observer is valid and ignores everything.
func NewObserver(workDir string) *Observer { return &Observer{log: toolLog{workDir: workDir}} }

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

// send hands msg to the attached display; it reports false when none is.
func (o *Observer) send(msg any) bool {
	if o == nil {
		return false
	}
	o.mu.Lock()
	sink := o.sink
	o.mu.Unlock()
	if sink == nil {
		return false
	}
	sink(msg)
	return true
}

// Notice shows one line from outside the agent (an MCP server that went
// away, say) above the live area, where writing to the terminal directly
// would tear the screen. It reports false when no display is attached; the
// caller then prints the line itself.
func (o *Observer) Notice(line string) bool {
	return o.send(noticeMsg{line: sanitizeLine(line)})
}

// Events the observer forwards.
type (
	opStartedMsg struct {
		kind session.OperationKind
	}
	// modelStartedMsg: a model request; compaction is set for a summary
	// request.
	modelStartedMsg struct{ compaction bool }
	deltaMsg        struct{ text string }
	modelDoneMsg    struct{ outcome agent.ModelOutcome }
	toolStartedMsg  struct{ info agent.ToolInfo }
	toolDoneMsg     struct {
		info    agent.ToolInfo
		outcome agent.ToolOutcome
		report  toolReport
	}
	cancelRequestedMsg struct{}
	// noticeMsg is a line from outside the agent, printed as it is.
	noticeMsg struct{ line string }
	// retryMsg: a request waits to be sent again.
	retryMsg  struct{ wait provider.RetryWait }
	opDoneMsg struct {
		result  agent.Result
		outcome agent.OperationOutcome
	}
)

// Event forwards what the display shows of an agent event; pass it as
// (or fan it out into) agent.Config.Events.
func (o *Observer) Event(ev agent.Event) {
	switch ev := ev.(type) {
	case agent.OperationStarted:
		o.send(opStartedMsg{kind: ev.Kind})
	case agent.ModelStarted:
		o.send(modelStartedMsg{compaction: ev.Model.Kind == session.OperationCompaction})
	case agent.ModelDelta:
		if ev.Text != "" {
			o.send(deltaMsg{text: ev.Text})
		}
	case agent.ModelReasoningDelta:
		if ev.Text != "" {
			o.send(reasoningMsg{text: ev.Text})
		}
	case agent.ModelCompleted:
		o.send(modelDoneMsg{outcome: ev.Outcome})
	case agent.ToolStarted:
		if o != nil {
			o.log.started(ev.Tool)
		}
		o.send(toolStartedMsg{info: ev.Tool})
	case agent.ToolCompleted:
		var r toolReport
		if o != nil {
			r = o.log.report(ev.Tool, ev.Outcome)
		}
		o.send(toolDoneMsg{info: ev.Tool, outcome: ev.Outcome, report: r})
	case agent.CancelRequested:
		o.send(cancelRequestedMsg{})
	case agent.ModelRetrying:
		o.send(retryMsg{wait: ev.Wait})
	case agent.OperationCompleted:
		o.send(opDoneMsg{result: ev.Result, outcome: ev.Outcome})
	}
	// ModelReconciled is an attempt of a dead process and ToolAdmitted is
	// followed by ToolStarted: nothing to show for either.
}
