package session

import "github.com/go-json-experiment/json/jsontext"

// Version is the only session format version this runtime reads and writes.
const Version = 2

// Header is line 1 of a session file.
type Header struct {
	ID                  string
	CreatedAt           int64
	Cwd                 string
	Provider            string
	Model               string
	EnvironmentIdentity string
}

// FactKind discriminates the three kinds of fact.
type FactKind string

const (
	KindEntry  FactKind = "entry"
	KindRecord FactKind = "record"
	KindUsage  FactKind = "usage"
)

// Fact is one element of a transaction. Exactly one of Entry, Record and
// Usage is set, matching Kind. Seq, ID and Timestamp are assigned by the
// store on Commit when zero/empty.
type Fact struct {
	Seq       int64
	ID        string
	Timestamp int64
	Entry     Entry
	Record    Record
	Usage     *UsageFact
}

// Kind reports which payload the fact carries.
func (f Fact) Kind() FactKind {
	switch {
	case f.Entry != nil:
		return KindEntry
	case f.Record != nil:
		return KindRecord
	default:
		return KindUsage
	}
}

// UsageFact attributes token usage to exactly one owner: a model attempt
// (AttemptID) or a started tool (ToolStartedID).
type UsageFact struct {
	OperationID   string
	AttemptID     string
	ToolStartedID string
	Usage         Usage
}

// Usage counts tokens. All counters are in 0..2^53-1.
type Usage struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	CacheRead  int64 `json:"cacheRead"`
	CacheWrite int64 `json:"cacheWrite"`
}

// Role of a model-visible message.
type Role string

const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is a model-visible message exactly as it is persisted and as the
// reduced state prints it. Content is nil only for an assistant message
// that calls tools without text.
type Message struct {
	Role       Role       `json:"role"`
	Content    *string    `json:"content"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
}

// ToolCall is a provider function call; Arguments is the model's raw string.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // always "function"
	Function FunctionCall `json:"function"`
}

// FunctionCall names the function and carries its raw argument string.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// StopReason of a settled assistant message.
type StopReason string

const (
	StopReasonStop    StopReason = "stop"
	StopReasonToolUse StopReason = "toolUse"
	StopReasonLength  StopReason = "length"
)

// Entry is a model-visible fact payload: one of *UserEntry,
// *AssistantEntry, *ToolResultEntry, *SyntheticEntry, *CompactionEntry.
type Entry interface{ isEntry() }

// UserEntry is a user message.
type UserEntry struct {
	Content string
}

// AssistantEntry is a settled assistant message; it closes its attempt.
type AssistantEntry struct {
	StepID     string
	AttemptID  string
	StopReason StopReason
	Content    *string
	ToolCalls  []ToolCall
}

// ResultType of a started tool's result entry.
type ResultType string

const (
	ResultSuccess     ResultType = "success"
	ResultError       ResultType = "error"
	ResultInterrupted ResultType = "interrupted" // persisted as {type:"synthetic",reason:"interrupted"}
)

// ToolResultEntry is the result of a started tool; its fact id equals the
// ResultEntryID provisioned by the matching ToolStarted.
type ToolResultEntry struct {
	StepID        string
	ToolCallID    string
	Content       string
	ToolName      string
	ToolStartedID string
	Result        ResultType
}

// SyntheticReason of a pre-execution synthetic result (the tool never
// started).
type SyntheticReason string

const (
	ReasonInvalidArguments SyntheticReason = "invalidArguments"
	ReasonUnknownTool      SyntheticReason = "unknownTool"
	ReasonTruncated        SyntheticReason = "truncated"
	ReasonAborted          SyntheticReason = "aborted"
)

// Fixed, never localized contents of synthetic results (session.md 3.1).
const (
	ContentInvalidArguments = "Error: Tool arguments were invalid; the tool was not executed."
	ContentUnknownTool      = "Error: Unknown tool; the tool was not executed."
	ContentTruncated        = "Error: Tool call arguments were truncated by the model token limit; the tool was not executed."
	ContentAborted          = "Operation aborted before execution."
	ContentInterrupted      = "Operation interrupted after execution status became unknown; the tool was not replayed."
)

// SyntheticContent returns the fixed content for a pre-execution reason.
func SyntheticContent(r SyntheticReason) string {
	switch r {
	case ReasonInvalidArguments:
		return ContentInvalidArguments
	case ReasonUnknownTool:
		return ContentUnknownTool
	case ReasonTruncated:
		return ContentTruncated
	case ReasonAborted:
		return ContentAborted
	}
	return ""
}

// SyntheticEntry is a pre-execution synthetic tool result.
type SyntheticEntry struct {
	StepID           string
	AssistantEntryID string
	ToolIndex        int
	ToolCallID       string
	Content          string
	ToolName         string
	Reason           SyntheticReason
}

// RetainedMessage is one message of a compaction's retained tail.
type RetainedMessage struct {
	SourceEntryID string  `json:"sourceEntryId"`
	Message       Message `json:"message"`
}

// CompactionEntry replaces the compacted prefix in the active context.
type CompactionEntry struct {
	OperationID             string
	Summary                 string
	CompactedThroughEntryID string
	RetainedTail            []RetainedMessage
}

func (*UserEntry) isEntry()       {}
func (*AssistantEntry) isEntry()  {}
func (*ToolResultEntry) isEntry() {}
func (*SyntheticEntry) isEntry()  {}
func (*CompactionEntry) isEntry() {}

// OperationKind of an operation.
type OperationKind string

const (
	OperationRun        OperationKind = "run"
	OperationCompaction OperationKind = "compaction"
)

// StepKind of a model step.
type StepKind string

const (
	StepAssistant  StepKind = "assistant"
	StepCompaction StepKind = "compaction"
)

// Phase that an abort targets.
type Phase string

const (
	PhaseModel   Phase = "model"
	PhaseTool    Phase = "tool"
	PhaseCompact Phase = "compact"
)

// Outcome of a finished operation.
type Outcome string

const (
	OutcomeCompleted Outcome = "completed"
	OutcomeAborted   Outcome = "aborted"
	OutcomeFailed    Outcome = "failed"
)

// Completion of a completed run.
type Completion string

const (
	CompletionNormal    Completion = "normal"
	CompletionTruncated Completion = "truncated"
)

// Error codes used in stepFailed and failed terminals.
const (
	CodeModelError        = "model_error"
	CodeAborted           = "aborted"
	CodeAttemptsExhausted = "attempts_exhausted"
	// CodeContextLimit ends a run whose context is full; a compaction and
	// a continuation run follow (runtime.md §4).
	CodeContextLimit = "context_limit"
)

// ErrorInfo is a persisted {code, message}.
type ErrorInfo struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Record is operation bookkeeping, never seen by the model: one of
// *RunStarted, *CompactionStarted, *StepAttempt, *StepFailed, *ToolStarted,
// *AbortRequested, *OperationFinished.
type Record interface {
	isRecord()
	// Operation is the id of the operation the record belongs to.
	Operation() string
}

// RunStarted opens a run; committed with its user entry.
type RunStarted struct {
	OperationID  string
	InputEntryID string
}

// CompactionStarted opens a compaction and fixes its source partition.
type CompactionStarted struct {
	OperationID         string
	InputThroughEntryID string
	ResultEntryID       string
	CompactedEntryIDs   []string
	RetainedEntryIDs    []string
	SourceDigest        string
}

// ConfigurationSnapshot is what a model attempt was configured with.
type ConfigurationSnapshot struct {
	Model               string              `json:"model"`
	SystemPromptDigest  string              `json:"systemPromptDigest"`
	Tools               []ConfigurationTool `json:"tools"`
	AdapterIdentity     string              `json:"adapterIdentity"`
	RoutingIdentity     string              `json:"routingIdentity"`
	OutputOptionsDigest string              `json:"outputOptionsDigest"`
}

// ConfigurationTool names an offered tool and the digest of its definition.
type ConfigurationTool struct {
	Name             string `json:"name"`
	DefinitionDigest string `json:"definitionDigest"`
}

// StepAttempt is one physical provider request; never reused.
type StepAttempt struct {
	OperationID           string
	StepID                string
	AttemptID             string
	StepKind              StepKind
	Attempt               int
	ContextThroughEntryID string
	ConfigurationSnapshot ConfigurationSnapshot
	ConfigurationDigest   string
}

// StepFailed closes an attempt (not the operation).
type StepFailed struct {
	OperationID string
	StepID      string
	AttemptID   string
	Error       ErrorInfo
}

// ToolStarted is the durable intent to run a tool; it must be committed
// before the effect starts.
type ToolStarted struct {
	OperationID         string
	StepID              string
	AssistantEntryID    string
	ToolIndex           int
	ToolCallID          string
	ToolName            string
	Arguments           jsontext.Value // a JSON object
	Replay              string         // "safe" or "never"
	ReplayKey           string
	EnvironmentIdentity string
	ResultEntryID       string
}

// AbortRequested is the durable intent to abort; committed before any
// signal is sent.
type AbortRequested struct {
	OperationID   string
	OperationKind OperationKind
	Phase         Phase
	ToolCallID    string // only for PhaseTool
	Reason        string // always "escape"
}

// AbortReasonEscape is the only abort reason in the format.
const AbortReasonEscape = "escape"

// OperationFinished is the one terminal of an operation. Completion is set
// only for completed runs, FinalEntryID for completed operations, Error for
// failed ones.
type OperationFinished struct {
	OperationID   string
	OperationKind OperationKind
	Outcome       Outcome
	Completion    Completion
	FinalEntryID  string
	Error         *ErrorInfo
}

func (r *RunStarted) Operation() string        { return r.OperationID }
func (r *CompactionStarted) Operation() string { return r.OperationID }
func (r *StepAttempt) Operation() string       { return r.OperationID }
func (r *StepFailed) Operation() string        { return r.OperationID }
func (r *ToolStarted) Operation() string       { return r.OperationID }
func (r *AbortRequested) Operation() string    { return r.OperationID }
func (r *OperationFinished) Operation() string { return r.OperationID }

func (*RunStarted) isRecord()        {}
func (*CompactionStarted) isRecord() {}
func (*StepAttempt) isRecord()       {}
func (*StepFailed) isRecord()        {}
func (*ToolStarted) isRecord()       {}
func (*AbortRequested) isRecord()    {}
func (*OperationFinished) isRecord() {}
