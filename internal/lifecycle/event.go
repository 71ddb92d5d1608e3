package lifecycle

import (
	"math"
	"time"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// Name is an event name exactly as events.md spells it.
type Name string

const (
	NameStartupStarted     Name = "startup.started"
	NameSessionAttached    Name = "session.attached"
	NameMCPStarted         Name = "mcp.started"
	NameMCPCompleted       Name = "mcp.completed"
	NameStartupCompleted   Name = "startup.completed"
	NameOperationStarted   Name = "operation.started"
	NameOperationRecovered Name = "operation.recovered"
	NameModelStarted       Name = "model.started"
	NameModelCompleted     Name = "model.completed"
	NameModelReconciled    Name = "model.reconciled"
	NameToolAdmitted       Name = "tool.admitted"
	NameToolStarted        Name = "tool.started"
	NameToolCompleted      Name = "tool.completed"
	NameCancelRequested    Name = "cancel.requested"
	NameOperationCompleted Name = "operation.completed"
)

// Names lists every event name in the canonical order of events.md.
func Names() []Name {
	return []Name{
		NameStartupStarted, NameSessionAttached, NameMCPStarted, NameMCPCompleted,
		NameStartupCompleted, NameOperationStarted, NameOperationRecovered,
		NameModelStarted, NameModelCompleted, NameModelReconciled, NameToolAdmitted,
		NameToolStarted, NameToolCompleted, NameCancelRequested, NameOperationCompleted,
	}
}

// Outcome of a completed projection.
type Outcome string

const (
	Succeeded Outcome = "succeeded"
	Failed    Outcome = "failed"
	Cancelled Outcome = "cancelled"
	// EffectUnknown ends a model or tool projection still open at shutdown;
	// nothing is written to the session for it.
	EffectUnknown Outcome = "effect_unknown"
)

// Bounded error types of mcp.completed and startup.completed.
const (
	ErrorTimeout          = "timeout"
	ErrorConnectionFailed = "connection_failed"
	ErrorStartupSetup     = "startup_setup_error"
	ErrorMCPSetup         = "mcp_setup_error"
	ErrorAgentSetup       = "agent_setup_error"
)

// Runtime is the value of startup.started's runtime field.
const Runtime = "go"

// TimestampLayout formats every event timestamp (always in UTC).
const TimestampLayout = "2006-01-02T15:04:05.000Z07:00"

// Event is one lifecycle event. Name decides which fields belong to it (the
// events.md table); fields that do not belong to Name are never serialized.
// Build events with the constructors (OperationStarted, ModelCompleted, ...)
// rather than by hand.
type Event struct {
	Name Name
	Time time.Time // serialized as "timestamp" in UTC, millisecond precision

	// startup.started (its runtime member is always Runtime). On
	// model.started and model.completed Model is not serialized; the
	// OpenTelemetry sink names the LLM span's model with it, falling back
	// to startup.started's model.
	Model   string
	Plugins []string
	MCP     []string

	SessionID string
	Resumed   bool // session.attached

	// mcp.*
	Server          string
	ProtocolVersion string // optional
	ToolCount       *int   // optional

	OperationID     string
	OperationKind   session.OperationKind
	StepID          string
	AttemptID       string // model attempt, or tool execution attempt on tool.started/completed
	Attempt         int    // attempt number (model.started)
	ParentAttemptID string // tool.started/completed: the model attempt that asked for the tool
	ToolStartedID   string
	ToolCallID      string // optional on cancel.requested
	Tool            string
	Replay          string // tool.admitted: "safe" or "never"
	Recovery        bool
	Phase           session.Phase // cancel.requested

	DurationMs int64
	Outcome    Outcome
	Usage      *Usage // optional on model.completed, always present on operation.completed

	Completion   session.Completion // optional
	Answer       string             // optional; JSON only, never exported to OpenTelemetry
	ErrorType    string             // optional; a short bounded code
	ErrorMessage string             // optional; JSON only, never exported to OpenTelemetry
}

// At returns a copy of e stamped with t.
func (e Event) At(t time.Time) Event {
	e.Time = t
	return e
}

// Timestamp is e's "timestamp" value.
func (e Event) Timestamp() string {
	return e.Time.UTC().Format(TimestampLayout)
}

// Usage counts the tokens of one request or a whole operation. Its fields
// match session.Usage, so session.Usage values convert directly:
// lifecycle.Usage(u).
type Usage struct {
	Input      int64
	Output     int64
	CacheRead  int64
	CacheWrite int64
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		Input:      u.Input + v.Input,
		Output:     u.Output + v.Output,
		CacheRead:  u.CacheRead + v.CacheRead,
		CacheWrite: u.CacheWrite + v.CacheWrite,
	}
}

// PromptTokens is every input token: uncached input plus cache reads and
// writes.
func (u Usage) PromptTokens() int64 { return u.Input + u.CacheRead + u.CacheWrite }

// CacheHitRate is cacheRead/(input+cacheRead+cacheWrite)*100, rounded to two
// decimals; 0 when nothing was sent.
func (u Usage) CacheHitRate() float64 {
	total := u.PromptTokens()
	if total <= 0 {
		return 0
	}
	return math.Round(float64(u.CacheRead)/float64(total)*100*100) / 100
}
