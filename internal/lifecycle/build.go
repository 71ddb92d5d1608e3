package lifecycle

import (
	"time"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// Op identifies the operation an event belongs to. Recovery is true when
// this process resumed the operation rather than starting it.
type Op struct {
	SessionID   string
	OperationID string
	Kind        session.OperationKind
	Recovery    bool
}

// ModelAttempt identifies one physical provider request (a stepAttempt).
// Model (the attempt's configured model) only names the LLM span; it is
// not part of the JSON events.
type ModelAttempt struct {
	Op
	StepID    string
	AttemptID string
	Number    int // 1 or 2
	Model     string
}

// ToolRun identifies one execution of a started tool. AttemptID is new per
// execution; ParentAttemptID is the model attempt whose reply asked for it.
type ToolRun struct {
	Op
	StepID          string
	AttemptID       string
	ParentAttemptID string
	ToolStartedID   string
	ToolCallID      string
	Tool            string
}

// Result is how an operation ended (operationFinished).
type Result struct {
	Outcome      Outcome
	Completion   session.Completion // completed runs only
	Answer       string             // final answer text, if any
	Usage        Usage              // whole operation
	ErrorType    string
	ErrorMessage string
}

func now() time.Time { return time.Now().UTC() }

func ms(d time.Duration) int64 { return d.Milliseconds() }

func (o Op) event(n Name) Event {
	return Event{
		Name:          n,
		Time:          now(),
		SessionID:     o.SessionID,
		OperationID:   o.OperationID,
		OperationKind: o.Kind,
		Recovery:      o.Recovery,
	}
}

func (a ModelAttempt) event(n Name) Event {
	e := a.Op.event(n)
	e.StepID = a.StepID
	e.AttemptID = a.AttemptID
	e.Attempt = a.Number
	e.Model = a.Model
	return e
}

func (t ToolRun) event(n Name) Event {
	e := t.Op.event(n)
	e.StepID = t.StepID
	e.AttemptID = t.AttemptID
	e.ParentAttemptID = t.ParentAttemptID
	e.ToolStartedID = t.ToolStartedID
	e.ToolCallID = t.ToolCallID
	e.Tool = t.Tool
	return e
}

// StartupStarted is the first event of a process. plugins and mcp name the
// enabled plugins and MCP servers (never nil in JSON).
func StartupStarted(model string, plugins, mcp []string) Event {
	return Event{Name: NameStartupStarted, Time: now(), Model: model, Plugins: plugins, MCP: mcp}
}

// SessionAttached reports the session the process writes to.
func SessionAttached(sessionID string, resumed bool) Event {
	return Event{Name: NameSessionAttached, Time: now(), SessionID: sessionID, Resumed: resumed}
}

// MCPStarted reports that connecting to an MCP server began.
func MCPStarted(server string) Event {
	return Event{Name: NameMCPStarted, Time: now(), Server: server}
}

// MCPConnected is a succeeded mcp.completed.
func MCPConnected(server string, d time.Duration, protocolVersion string, toolCount int) Event {
	return Event{
		Name: NameMCPCompleted, Time: now(), Server: server, DurationMs: ms(d),
		Outcome: Succeeded, ProtocolVersion: protocolVersion, ToolCount: &toolCount,
	}
}

// MCPFailed is a failed mcp.completed; errorType is ErrorTimeout or
// ErrorConnectionFailed.
func MCPFailed(server string, d time.Duration, errorType string) Event {
	return Event{
		Name: NameMCPCompleted, Time: now(), Server: server, DurationMs: ms(d),
		Outcome: Failed, ErrorType: errorType,
	}
}

// StartupCompleted ends startup; errorType is empty or one of
// ErrorStartupSetup, ErrorMCPSetup, ErrorAgentSetup.
func StartupCompleted(d time.Duration, outcome Outcome, errorType string) Event {
	return Event{Name: NameStartupCompleted, Time: now(), DurationMs: ms(d), Outcome: outcome, ErrorType: errorType}
}

// OperationStarted projects runStarted or compactionStarted.
func OperationStarted(op Op) Event { return op.event(NameOperationStarted) }

// OperationRecovered reports that this process resumed an open operation.
func OperationRecovered(op Op) Event {
	op.Recovery = true
	return op.event(NameOperationRecovered)
}

// ModelStarted projects a stepAttempt.
func ModelStarted(a ModelAttempt) Event { return a.event(NameModelStarted) }

// ModelCompleted projects the entry or stepFailed that closes an attempt.
// usage may be nil (no usage was reported).
func ModelCompleted(a ModelAttempt, d time.Duration, outcome Outcome, usage *Usage, errorType string) Event {
	e := a.event(NameModelCompleted)
	e.DurationMs = ms(d)
	e.Outcome = outcome
	e.Usage = usage
	e.ErrorType = errorType
	return e
}

// ModelReconciled projects a stepFailed committed for an attempt of a dead
// process.
func ModelReconciled(a ModelAttempt, outcome Outcome, errorType string) Event {
	a.Recovery = true
	e := a.event(NameModelReconciled)
	e.Outcome = outcome
	e.ErrorType = errorType
	return e
}

// ToolAdmitted projects a toolStarted; replay is "safe" or "never".
func ToolAdmitted(op Op, stepID, toolStartedID, toolCallID, tool, replay string) Event {
	e := op.event(NameToolAdmitted)
	e.StepID = stepID
	e.ToolStartedID = toolStartedID
	e.ToolCallID = toolCallID
	e.Tool = tool
	e.Replay = replay
	return e
}

// ToolStarted reports that this process starts the tool's effect.
func ToolStarted(t ToolRun) Event { return t.event(NameToolStarted) }

// ToolCompleted projects the tool's result entry (see ToolOutcome).
func ToolCompleted(t ToolRun, d time.Duration, outcome Outcome) Event {
	e := t.event(NameToolCompleted)
	e.DurationMs = ms(d)
	e.Outcome = outcome
	return e
}

// CancelRequested projects an abortRequested; toolCallID only for the tool
// phase.
func CancelRequested(op Op, phase session.Phase, toolCallID string) Event {
	e := op.event(NameCancelRequested)
	e.Phase = phase
	e.ToolCallID = toolCallID
	return e
}

// OperationCompleted projects operationFinished.
func OperationCompleted(op Op, d time.Duration, r Result) Event {
	e := op.event(NameOperationCompleted)
	e.DurationMs = ms(d)
	e.Outcome = r.Outcome
	e.Completion = r.Completion
	e.Answer = r.Answer
	u := r.Usage
	e.Usage = &u
	e.ErrorType = r.ErrorType
	e.ErrorMessage = r.ErrorMessage
	return e
}
