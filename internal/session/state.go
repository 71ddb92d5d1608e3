package session

import "hash"

// State is the reduced state of a session. Its JSON form (see MarshalState)
// has exactly the fields of expected-state.schema.json; the extra fields
// below it serve the planner and the agent and are never printed.
type State struct {
	Header         Header
	Transcript     []Message // every model-visible message, in order
	ActiveContext  []Message // what the next request sends after the system prompt
	Usage          Usage
	Operation      *Operation // nil when idle
	RepairedLength int64      // byte length through the final LF

	// Boundary is the id of the current active-context boundary: the last
	// model-visible message entry, or after a compaction its
	// InputThroughEntryID when no message followed. Empty before any entry.
	Boundary string
	// ActiveEntryIDs are the source entry ids of ActiveContext messages,
	// aligned with ActiveContext; "" for the [Compacted history] message.
	ActiveEntryIDs []string
	// TranscriptEntryIDs are the entry ids of Transcript messages, aligned
	// with it: the durable source of every compaction (runtime.md §4).
	TranscriptEntryIDs []string
	// Released is the number of leading Transcript messages whose
	// assistant content, tool-call arguments and tool results were dropped
	// because a compaction summarized them (ReadHooks.ReleaseCompacted);
	// their roles, ids, tool call ids and names and user prompts stay. 0
	// when the state holds every message's text.
	Released int
	// Facts is the number of facts applied; NextSeq = Facts + 1.
	Facts int64
	// LastAssistantUsage is the usage of the latest assistant-step model
	// attempt whose usage fact names the open step (automatic compaction
	// compares its prompt size with the context window); zero if none.
	LastAssistantUsage Usage
	// LastFinished is the terminal of the latest finished operation, the
	// zero value before any.
	LastFinished FinishedOperation
	// ContinuationOwed is set when the last two operations are a run that
	// failed with context_limit and a completed compaction, with no
	// operation started since: the task goes on with a continuation run
	// (runtime.md §4).
	ContinuationOwed bool

	// histHash is the reducer's SourceDigest hash over the first
	// histHashed Transcript messages (see HistoryDigest); a copy that
	// nothing changes. Nil before the first compactionStarted.
	histHash   hash.Hash
	histHashed int
}

// FinishedOperation is what the chain of runtime.md §4 needs to know of a
// finished operation.
type FinishedOperation struct {
	Kind      OperationKind
	Outcome   Outcome
	ErrorCode string
}

// Operation is the open (unfinished) operation.
type Operation struct {
	Kind        OperationKind
	OperationID string

	// Run only.
	InputEntryID string
	// ToolCalls are the started tools of the current assistant entry, in
	// toolIndex order (printed as toolCalls).
	ToolCalls []ToolState
	// Assistant is the latest settled assistant entry of this run, with
	// the answer state of each of its calls; nil before the first one.
	Assistant *AssistantState

	// Compaction only.
	InputThroughEntryID string
	ResultEntryID       string
	// Compaction is the compactionStarted record (its source partition).
	Compaction *CompactionStarted
	// CompactionEntryWritten is true once the compaction entry is durable.
	CompactionEntryWritten bool

	// Step is the latest step attempt of the operation, nil before any.
	Step           *Step
	AbortRequested bool
	// Abort is the abortRequested record when AbortRequested.
	Abort *AbortRequested
}

// StepStatus of the latest attempt.
type StepStatus string

const (
	StepAttempting StepStatus = "attempting"
	StepSettled    StepStatus = "settled"
	StepFailedS    StepStatus = "failed"
)

// Step is the state of the latest step attempt.
type Step struct {
	OperationID           string
	StepID                string
	AttemptID             string
	Attempt               int
	StepKind              StepKind
	Status                StepStatus
	ContextThroughEntryID string
	ConfigurationSnapshot ConfigurationSnapshot
	ConfigurationDigest   string
	SettledEntryID        string     // set when settled
	StopReason            StopReason // set when settled by an assistant entry
	Failure               *ErrorInfo // set when failed (not printed)
}

// ToolStatus of a started tool.
type ToolStatus string

const (
	ToolPending   ToolStatus = "pending"
	ToolCompleted ToolStatus = "completed"
)

// ToolState is a started tool (a toolStarted record) and whether its result
// entry exists.
type ToolState struct {
	ToolStarted
	ToolStartedID string
	Status        ToolStatus
}

// AssistantState is a settled assistant entry and the answer state of each
// of its tool calls, indexed by toolIndex.
type AssistantState struct {
	EntryID    string
	StepID     string
	StopReason StopReason
	ToolCalls  []ToolCall
	Calls      []CallState
}

// CallState says how one tool call of the assistant entry stands.
type CallState struct {
	// ToolStartedID is set once a toolStarted record names the call.
	ToolStartedID string
	// Answered is true once the call has a result entry (started or
	// synthetic).
	Answered bool
	// ResultEntryID is the result entry's id when answered.
	ResultEntryID string
}

// Idle reports whether no operation is open.
func (s *State) Idle() bool { return s.Operation == nil }
