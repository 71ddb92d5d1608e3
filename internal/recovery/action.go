package recovery

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// Action is the one next step of recovery that Plan returns. It is a sum
// type: the concrete types are Finish, StartStep, StartTool,
// AppendSynthetic, CloseAttempt and Blocked, and each marshals (with
// github.com/go-json-experiment/json) to exactly one branch of
// recovery-plan.schema.json. Actions carry no new ids: the executor gets
// them from the store when it commits the facts an action describes.
type Action interface {
	json.MarshalerTo
	isAction()
}

// Finish ends the operation with the operationFinished terminal it
// describes; on an idle session it is {completed, normal} and appends
// nothing.
type Finish struct {
	Outcome      session.Outcome
	Completion   session.Completion // completed runs only
	FinalEntryID string             // completed operations only
	Error        *session.ErrorInfo // failed only
}

// StartStep makes a model request: attempt 1 of a new step (StepID empty,
// the store provides it) or attempt 2 of the open step (StepID set).
type StartStep struct {
	StepKind              session.StepKind
	Attempt               int
	StepID                string
	ContextThroughEntryID string
}

// Start modes of StartTool.
const (
	ModeStart  = "start"
	ModeReplay = "replay"
)

// StartTool runs one tool call: for the first time (ModeStart: commit a
// new toolStarted, then run) or again after a crash (ModeReplay: the
// persisted toolStarted stands, ToolStartedID names it, Arguments are the
// persisted ones).
type StartTool struct {
	Mode             string
	AssistantEntryID string
	ToolIndex        int
	ToolStartedID    string // ModeReplay only
	ToolName         string
	Arguments        jsontext.Value // a JSON object
}

// AppendSynthetic commits one synthetic result entry per element, in order.
type AppendSynthetic struct {
	Results []Synthetic
}

// ReasonInterrupted is the synthetic reason of a started tool whose result
// is unknown; its entry id is the provisioned ResultEntryID.
const ReasonInterrupted session.SyntheticReason = "interrupted"

// Synthetic is one synthetic tool result. ToolStartedID and ResultEntryID
// are set only for Reason == ReasonInterrupted (the tool had started);
// every other reason is a pre-execution result. Content is the fixed text
// of session.md 3.1.
type Synthetic struct {
	AssistantEntryID string
	ToolIndex        int
	ToolCallID       string
	ToolName         string
	ToolStartedID    string
	ResultEntryID    string
	Reason           session.SyntheticReason
	Content          string
}

// CloseAttempt commits stepFailed with Error for the open attempt.
type CloseAttempt struct {
	Error session.ErrorInfo
}

// BlockReason says why recovery cannot proceed without a human.
type BlockReason string

const (
	BlockedConfigurationChanged     BlockReason = "configuration_changed"
	BlockedEnvironmentChanged       BlockReason = "environment_changed"
	BlockedReplayDeclarationChanged BlockReason = "replay_declaration_changed"
	BlockedAttemptsExhausted        BlockReason = "attempts_exhausted"
)

// Blocked appends nothing and runs nothing (runtime.md §2).
type Blocked struct {
	Reason BlockReason
}

func (Finish) isAction()          {}
func (StartStep) isAction()       {}
func (StartTool) isAction()       {}
func (AppendSynthetic) isAction() {}
func (CloseAttempt) isAction()    {}
func (Blocked) isAction()         {}

// The wire structs below are the schema branches, member for member.

type wireFinish struct {
	Type         string             `json:"type"`
	Outcome      session.Outcome    `json:"outcome"`
	Completion   session.Completion `json:"completion,omitempty"`
	FinalEntryID string             `json:"finalEntryId,omitempty"`
	Error        *session.ErrorInfo `json:"error,omitempty"`
}

type wireStartStep struct {
	Type                  string           `json:"type"`
	StepKind              session.StepKind `json:"stepKind"`
	Attempt               int              `json:"attempt"`
	StepID                string           `json:"stepId,omitempty"`
	ContextThroughEntryID string           `json:"contextThroughEntryId"`
}

type wireStartTool struct {
	Type             string         `json:"type"`
	Mode             string         `json:"mode"`
	AssistantEntryID string         `json:"assistantEntryId"`
	ToolIndex        int            `json:"toolIndex"`
	ToolStartedID    string         `json:"toolStartedId,omitempty"`
	ToolName         string         `json:"toolName"`
	Arguments        jsontext.Value `json:"arguments"`
}

type wireSynthetic struct {
	AssistantEntryID string                  `json:"assistantEntryId"`
	ToolIndex        int                     `json:"toolIndex"`
	ToolCallID       string                  `json:"toolCallId"`
	ToolName         string                  `json:"toolName"`
	ToolStartedID    string                  `json:"toolStartedId,omitempty"`
	ResultEntryID    string                  `json:"resultEntryId,omitempty"`
	Reason           session.SyntheticReason `json:"reason"`
	Content          string                  `json:"content"`
}

type wireAppendSynthetic struct {
	Type    string          `json:"type"`
	Results []wireSynthetic `json:"results"`
}

type wireCloseAttempt struct {
	Type  string            `json:"type"`
	Error session.ErrorInfo `json:"error"`
}

type wireBlocked struct {
	Type   string      `json:"type"`
	Reason BlockReason `json:"reason"`
}

// MarshalJSONTo writes the finish branch of recovery-plan.schema.json.
func (a Finish) MarshalJSONTo(enc *jsontext.Encoder) error {
	return json.MarshalEncode(enc, wireFinish{"finish", a.Outcome, a.Completion, a.FinalEntryID, a.Error})
}

// MarshalJSONTo writes the startStep branch of recovery-plan.schema.json.
func (a StartStep) MarshalJSONTo(enc *jsontext.Encoder) error {
	return json.MarshalEncode(enc, wireStartStep{"startStep", a.StepKind, a.Attempt, a.StepID, a.ContextThroughEntryID})
}

// MarshalJSONTo writes the startTool branch of recovery-plan.schema.json.
func (a StartTool) MarshalJSONTo(enc *jsontext.Encoder) error {
	args := a.Arguments
	if len(args) == 0 {
		args = jsontext.Value("{}")
	}
	return json.MarshalEncode(enc, wireStartTool{"startTool", a.Mode, a.AssistantEntryID, a.ToolIndex, a.ToolStartedID, a.ToolName, args})
}

// MarshalJSONTo writes the appendSynthetic branch of
// recovery-plan.schema.json.
func (a AppendSynthetic) MarshalJSONTo(enc *jsontext.Encoder) error {
	w := wireAppendSynthetic{Type: "appendSynthetic", Results: make([]wireSynthetic, len(a.Results))}
	for i, r := range a.Results {
		w.Results[i] = wireSynthetic(r)
	}
	return json.MarshalEncode(enc, w)
}

// MarshalJSONTo writes the closeAttempt branch of recovery-plan.schema.json.
func (a CloseAttempt) MarshalJSONTo(enc *jsontext.Encoder) error {
	return json.MarshalEncode(enc, wireCloseAttempt{"closeAttempt", a.Error})
}

// MarshalJSONTo writes the blocked branch of recovery-plan.schema.json.
func (a Blocked) MarshalJSONTo(enc *jsontext.Encoder) error {
	return json.MarshalEncode(enc, wireBlocked{"blocked", a.Reason})
}
