// Package sessiontest builds session files from typed facts for tests and
// benchmarks: a Builder that commits transactions the way the agent does
// (deterministic ids, seqs and timestamps), and Generate, which writes a
// realistic session of a given size.
package sessiontest

import (
	"fmt"
	"slices"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// Builder accumulates the lines of one session file. Every method commits
// one transaction through session.EncodeTransaction and panics if it
// fails: a Builder is for tests, where a bad fact is a bug in the test.
// It keeps the facts valid by construction only as far as the methods are
// called in a legal order; Reduce is the judge.
type Builder struct {
	Header session.Header
	// Snapshot is the configuration of every stepAttempt.
	Snapshot session.ConfigurationSnapshot

	buf      []byte
	lines    int
	seq      int64
	ids      uint64
	now      int64
	boundary string
	sources  []session.RetainedMessage // source entries of the active context
	history  []session.RetainedMessage // every message entry, in seq order
}

// NewBuilder starts a session with a fixed header and snapshot. Ids are
// UUIDv7-shaped counters (018f0000-0000-7000-8000-<n>), the header taking
// n=1, so files are deterministic.
func NewBuilder() *Builder {
	b := &Builder{now: 1710000000000}
	b.Header = session.Header{
		ID:                  b.ID(),
		CreatedAt:           b.now,
		Cwd:                 "/workspace",
		Provider:            "openrouter",
		Model:               "test/model",
		EnvironmentIdentity: "fixture",
	}
	b.Snapshot = DefaultSnapshot("test/model")
	b.buf = session.EncodeHeader(b.Header)
	b.lines = 1
	return b
}

// DefaultSnapshot is a snapshot offering the built-in tools.
func DefaultSnapshot(model string) session.ConfigurationSnapshot {
	var tools []session.ConfigurationTool
	for _, name := range []string{"bash", "read", "write", "edit", "bg"} {
		d, err := session.DefinitionDigest(name, "The "+name+" tool.", jsontext.Value(`{"type":"object"}`), "")
		if err != nil {
			panic(err)
		}
		tools = append(tools, session.ConfigurationTool{Name: name, DefinitionDigest: d})
	}
	return session.ConfigurationSnapshot{
		Model:               model,
		SystemPromptDigest:  session.StringDigest("You are a coding agent."),
		Tools:               tools,
		AdapterIdentity:     "openrouter:chat-completions:v1",
		RoutingIdentity:     "openrouter:" + model,
		OutputOptionsDigest: session.EmptyObjectDigest,
	}
}

// ID returns a new id.
func (b *Builder) ID() string {
	b.ids++
	return fmt.Sprintf("018f0000-0000-7000-8000-%012x", b.ids)
}

// Bytes returns the file so far.
func (b *Builder) Bytes() []byte { return b.buf }

// Lines is the number of lines so far, the header included.
func (b *Builder) Lines() int { return b.lines }

// Facts is the number of facts committed.
func (b *Builder) Facts() int64 { return b.seq }

// Boundary is the id of the last message entry.
func (b *Builder) Boundary() string { return b.boundary }

// Sources returns the source entries of the active context (what a
// compaction would partition), in order.
func (b *Builder) Sources() []session.RetainedMessage { return slices.Clone(b.sources) }

// Commit assigns seq, timestamp and (when empty) an id to each fact,
// appends the transaction line and returns the facts as committed.
func (b *Builder) Commit(facts ...session.Fact) []session.Fact {
	tx := slices.Clone(facts)
	for i := range tx {
		b.seq++
		b.now++
		tx[i].Seq = b.seq
		tx[i].Timestamp = b.now
		if tx[i].ID == "" {
			tx[i].ID = b.ID()
		}
		b.track(&tx[i])
	}
	line, err := session.EncodeTransaction(tx)
	if err != nil {
		panic(err)
	}
	b.buf = append(b.buf, line...)
	b.lines++
	return tx
}

// track follows the boundary and the compaction source as entries land.
func (b *Builder) track(f *session.Fact) {
	var m session.Message
	switch e := f.Entry.(type) {
	case *session.UserEntry:
		m = session.Message{Role: session.RoleUser, Content: &e.Content}
	case *session.AssistantEntry:
		m = session.Message{Role: session.RoleAssistant, Content: e.Content, ToolCalls: e.ToolCalls}
	case *session.ToolResultEntry:
		m = session.Message{Role: session.RoleTool, Content: &e.Content, ToolCallID: e.ToolCallID}
	case *session.SyntheticEntry:
		m = session.Message{Role: session.RoleTool, Content: &e.Content, ToolCallID: e.ToolCallID}
	case *session.CompactionEntry:
		b.sources = slices.Clone(e.RetainedTail)
		return
	default:
		return
	}
	b.boundary = f.ID
	b.sources = append(b.sources, session.RetainedMessage{SourceEntryID: f.ID, Message: m})
	b.history = append(b.history, session.RetainedMessage{SourceEntryID: f.ID, Message: m})
}

// Entry and Record wrap payloads into facts.
func Entry(e session.Entry) session.Fact   { return session.Fact{Entry: e} }
func Record(r session.Record) session.Fact { return session.Fact{Record: r} }

// Usage is a usage fact owned by an attempt or (toolStarted != "") a tool.
func Usage(op, attempt, toolStarted string, u session.Usage) session.Fact {
	return session.Fact{Usage: &session.UsageFact{OperationID: op, AttemptID: attempt, ToolStartedID: toolStarted, Usage: u}}
}

// Prompt commits [user entry + runStarted] and returns the run's id.
func (b *Builder) Prompt(text string) (op string) {
	op = b.ID()
	user := b.ID()
	b.Commit(
		session.Fact{ID: user, Entry: &session.UserEntry{Content: text}},
		Record(&session.RunStarted{OperationID: op, InputEntryID: user}),
	)
	return op
}

// Attempt commits a stepAttempt at the current boundary: a new step when
// step is "", else attempt 2 of step. It returns the step and attempt ids.
func (b *Builder) Attempt(op string, kind session.StepKind, step string) (string, string) {
	attempt := 2
	if step == "" {
		step, attempt = b.ID(), 1
	}
	att := b.ID()
	b.Commit(b.StepAttempt(op, kind, step, att, attempt, b.boundary))
	return step, att
}

// StepAttempt builds a stepAttempt fact with the builder's snapshot.
func (b *Builder) StepAttempt(op string, kind session.StepKind, step, attempt string, n int, boundary string) session.Fact {
	return Record(&session.StepAttempt{
		OperationID:           op,
		StepID:                step,
		AttemptID:             attempt,
		StepKind:              kind,
		Attempt:               n,
		ContextThroughEntryID: boundary,
		ConfigurationSnapshot: b.Snapshot,
		ConfigurationDigest:   session.ConfigurationDigest(b.Snapshot),
	})
}

// Reply builds the assistant entry fact of an attempt.
func Reply(step, attempt string, stop session.StopReason, text string, calls ...session.ToolCall) session.Fact {
	var content *string
	if text != "" || len(calls) == 0 {
		content = &text
	}
	return Entry(&session.AssistantEntry{StepID: step, AttemptID: attempt, StopReason: stop, Content: content, ToolCalls: calls})
}

// Call is a function tool call.
func Call(id, name, arguments string) session.ToolCall {
	return session.ToolCall{ID: id, Type: "function", Function: session.FunctionCall{Name: name, Arguments: arguments}}
}

// StartTool commits the toolStarted of call index of the assistant entry
// and returns its id and the provisioned result entry id.
func (b *Builder) StartTool(op, step, assistant string, index int, call session.ToolCall, replay, key string) (started, result string) {
	started, result = b.ID(), b.ID()
	b.Commit(session.Fact{ID: started, Record: &session.ToolStarted{
		OperationID:         op,
		StepID:              step,
		AssistantEntryID:    assistant,
		ToolIndex:           index,
		ToolCallID:          call.ID,
		ToolName:            call.Function.Name,
		Arguments:           jsontext.Value(call.Function.Arguments),
		Replay:              replay,
		ReplayKey:           key,
		EnvironmentIdentity: b.Header.EnvironmentIdentity,
		ResultEntryID:       result,
	}})
	return started, result
}

// ToolResult builds the result entry fact of a started tool.
func ToolResult(step, started, result string, call session.ToolCall, rt session.ResultType, content string) session.Fact {
	if rt == session.ResultInterrupted {
		content = session.ContentInterrupted
	}
	return session.Fact{ID: result, Entry: &session.ToolResultEntry{
		StepID:        step,
		ToolCallID:    call.ID,
		Content:       content,
		ToolName:      call.Function.Name,
		ToolStartedID: started,
		Result:        rt,
	}}
}

// Synthetic builds a pre-execution synthetic result fact.
func Synthetic(step, assistant string, index int, call session.ToolCall, reason session.SyntheticReason) session.Fact {
	return Entry(&session.SyntheticEntry{
		StepID:           step,
		AssistantEntryID: assistant,
		ToolIndex:        index,
		ToolCallID:       call.ID,
		Content:          session.SyntheticContent(reason),
		ToolName:         call.Function.Name,
		Reason:           reason,
	})
}

// Finished builds an operationFinished fact.
func Finished(op string, kind session.OperationKind, outcome session.Outcome, completion session.Completion, final string, e *session.ErrorInfo) session.Fact {
	return Record(&session.OperationFinished{
		OperationID: op, OperationKind: kind, Outcome: outcome,
		Completion: completion, FinalEntryID: final, Error: e,
	})
}

// CompactionPlan is the source partition of a compaction.
type CompactionPlan struct {
	Compacted, Retained []session.RetainedMessage
}

// PlanCompaction cuts the active context's source entries so that at
// least keep of them are retained and the first retained one is a user
// message (runtime.md §4). ok is false when no such cut exists. The
// compacted side is the whole history before the cut, entries earlier
// compactions summarized included.
func (b *Builder) PlanCompaction(keep int) (CompactionPlan, bool) {
	cut := len(b.sources) - keep
	for cut > 0 && b.sources[cut].Message.Role != session.RoleUser {
		cut--
	}
	if cut <= 0 {
		return CompactionPlan{}, false
	}
	at := len(b.history) - len(b.sources) + cut
	return CompactionPlan{Compacted: b.history[:at:at], Retained: b.history[at:]}, true
}

// StartCompaction commits the compactionStarted of plan and returns the
// operation and provisioned result entry ids.
func (b *Builder) StartCompaction(plan CompactionPlan) (op, result string) {
	op, result = b.ID(), b.ID()
	ids := func(ms []session.RetainedMessage) []string {
		out := []string{}
		for _, m := range ms {
			out = append(out, m.SourceEntryID)
		}
		return out
	}
	b.Commit(Record(&session.CompactionStarted{
		OperationID:         op,
		InputThroughEntryID: b.boundary,
		ResultEntryID:       result,
		CompactedEntryIDs:   ids(plan.Compacted),
		RetainedEntryIDs:    ids(plan.Retained),
		SourceDigest:        session.SourceDigest(slices.Concat(plan.Compacted, plan.Retained)),
	}))
	return op, result
}

// CompactionEntry builds the compaction entry fact of plan.
func CompactionEntry(op, result, summary string, plan CompactionPlan) session.Fact {
	return session.Fact{ID: result, Entry: &session.CompactionEntry{
		OperationID:             op,
		Summary:                 summary,
		CompactedThroughEntryID: plan.Compacted[len(plan.Compacted)-1].SourceEntryID,
		RetainedTail:            slices.Clone(plan.Retained),
	}}
}

// Compact commits a whole successful compaction that keeps at least keep
// source messages; it reports false (and commits nothing) when there is
// nothing to compact.
func (b *Builder) Compact(summary string, keep int, usage session.Usage) bool {
	plan, ok := b.PlanCompaction(keep)
	if !ok {
		return false
	}
	op, result := b.StartCompaction(plan)
	_, att := b.Attempt(op, session.StepCompaction, "")
	b.Commit(Usage(op, att, "", usage), CompactionEntry(op, result, summary, plan))
	b.Commit(Finished(op, session.OperationCompaction, session.OutcomeCompleted, "", result, nil))
	return true
}
