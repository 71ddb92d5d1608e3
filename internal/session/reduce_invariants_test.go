package session_test

import (
	"testing"

	s "github.com/tiny-agent/tiny-go/internal/session"
	st "github.com/tiny-agent/tiny-go/internal/session/sessiontest"
)

// run is a started run with its first attempt open.
type run struct {
	b             *st.Builder
	op, user      string
	step, attempt string
}

func startRun(prompt string) run {
	b := st.NewBuilder()
	op := b.Prompt(prompt)
	user := b.Boundary()
	step, att := b.Attempt(op, s.StepAssistant, "")
	return run{b, op, user, step, att}
}

// reply commits a reply to the open attempt and returns its entry id.
func (r run) reply(stop s.StopReason, text string, calls ...s.ToolCall) string {
	r.b.Commit(st.Reply(r.step, r.attempt, stop, text, calls...), st.Usage(r.op, r.attempt, "", s.Usage{Input: 10, Output: 2}))
	return r.b.Boundary()
}

// finish completes the run normally after a stop reply.
func (r run) finish() {
	r.b.Commit(st.Finished(r.op, s.OperationRun, s.OutcomeCompleted, s.CompletionNormal, r.b.Boundary(), nil))
}

var (
	call1 = st.Call("call_1", "read", `{"path":"a.go"}`)
	call2 = st.Call("call_2", "bash", `{"command":"ls"}`)
)

// TestInvariantViolations builds sessions whose last line breaks one rule
// of session.md §5 and checks the code and line.
func TestInvariantViolations(t *testing.T) {
	for _, tc := range []struct {
		name  string
		code  string
		build func() *st.Builder
	}{
		{"runStarted while a run is open", s.CorruptInvalidTransition, func() *st.Builder {
			r := startRun("hi")
			r.b.Commit(st.Record(&s.RunStarted{OperationID: r.b.ID(), InputEntryID: r.user}))
			return r.b
		}},
		{"user entry while a run is open", s.CorruptInvalidTransition, func() *st.Builder {
			r := startRun("hi")
			r.b.Commit(st.Entry(&s.UserEntry{Content: "more"}))
			return r.b
		}},
		{"runStarted on an assistant entry", s.CorruptInvalidReference, func() *st.Builder {
			r := startRun("hi")
			final := r.reply(s.StopReasonStop, "hello")
			r.finish()
			r.b.Commit(st.Record(&s.RunStarted{OperationID: r.b.ID(), InputEntryID: final}))
			return r.b
		}},
		{"runStarted on an older user entry", s.CorruptInvalidTransition, func() *st.Builder {
			r := startRun("hi")
			r.reply(s.StopReasonStop, "hello")
			r.finish()
			r.b.Commit(st.Entry(&s.UserEntry{Content: "next"}))
			r.b.Commit(st.Record(&s.RunStarted{OperationID: r.b.ID(), InputEntryID: r.user}))
			return r.b
		}},
		{"attempt 1 at a stale boundary", s.CorruptInvalidTransition, func() *st.Builder {
			r := startRun("hi")
			asst := r.reply(s.StopReasonToolUse, "", call1)
			r.b.Commit(st.Synthetic(r.step, asst, 0, call1, s.ReasonUnknownTool))
			r.b.Commit(r.b.StepAttempt(r.op, s.StepAssistant, r.b.ID(), r.b.ID(), 1, asst))
			return r.b
		}},
		{"attempt 2 at another boundary", s.CorruptInvalidFact, func() *st.Builder {
			r := startRun("hi")
			r.b.Commit(r.b.StepAttempt(r.op, s.StepAssistant, r.step, r.b.ID(), 2, r.op))
			return r.b
		}},
		{"attempt 2 of another step", s.CorruptInvalidFact, func() *st.Builder {
			r := startRun("hi")
			r.b.Commit(r.b.StepAttempt(r.op, s.StepAssistant, r.b.ID(), r.b.ID(), 2, r.user))
			return r.b
		}},
		{"attempt 2 with another configuration", s.CorruptInvalidFact, func() *st.Builder {
			r := startRun("hi")
			r.b.Snapshot = st.DefaultSnapshot("other/model")
			r.b.Attempt(r.op, s.StepAssistant, r.step)
			return r.b
		}},
		{"attempt 2 after the step settled", s.CorruptInvalidTransition, func() *st.Builder {
			r := startRun("hi")
			r.reply(s.StopReasonStop, "hello")
			r.b.Attempt(r.op, s.StepAssistant, r.step)
			return r.b
		}},
		{"a third attempt", s.CorruptInvalidTransition, func() *st.Builder {
			r := startRun("hi")
			r.b.Attempt(r.op, s.StepAssistant, r.step)
			r.b.Attempt(r.op, s.StepAssistant, r.step)
			return r.b
		}},
		{"a second open step", s.CorruptInvalidTransition, func() *st.Builder {
			r := startRun("hi")
			r.b.Attempt(r.op, s.StepAssistant, "")
			return r.b
		}},
		{"a compaction step in a run", s.CorruptInvalidTransition, func() *st.Builder {
			r := startRun("hi")
			r.reply(s.StopReasonToolUse, "", call1)
			r.b.Attempt(r.op, s.StepCompaction, "")
			return r.b
		}},
		{"a new step after the final reply", s.CorruptInvalidTransition, func() *st.Builder {
			r := startRun("hi")
			r.reply(s.StopReasonStop, "hello")
			r.b.Attempt(r.op, s.StepAssistant, "")
			return r.b
		}},
		{"stop reply with tool calls", s.CorruptInvalidTranscript, func() *st.Builder {
			r := startRun("hi")
			r.reply(s.StopReasonStop, "x", call1)
			return r.b
		}},
		{"toolUse reply without calls", s.CorruptInvalidTranscript, func() *st.Builder {
			r := startRun("hi")
			r.reply(s.StopReasonToolUse, "x")
			return r.b
		}},
		{"empty final reply", s.CorruptInvalidTranscript, func() *st.Builder {
			r := startRun("hi")
			r.reply(s.StopReasonStop, "")
			return r.b
		}},
		{"duplicate call ids", s.CorruptInvalidTranscript, func() *st.Builder {
			r := startRun("hi")
			r.reply(s.StopReasonToolUse, "", call1, call1)
			return r.b
		}},
		{"reply to a closed attempt", s.CorruptInvalidTransition, func() *st.Builder {
			r := startRun("hi")
			r.reply(s.StopReasonToolUse, "", call1)
			r.reply(s.StopReasonStop, "again")
			return r.b
		}},
		{"toolStarted for a length reply", s.CorruptInvalidTransition, func() *st.Builder {
			r := startRun("hi")
			asst := r.reply(s.StopReasonLength, "", call1)
			r.b.StartTool(r.op, r.step, asst, 0, call1, "safe", "builtin:read:v1")
			return r.b
		}},
		{"toolStarted twice", s.CorruptInvalidTransition, func() *st.Builder {
			r := startRun("hi")
			asst := r.reply(s.StopReasonToolUse, "", call1)
			r.b.StartTool(r.op, r.step, asst, 0, call1, "safe", "builtin:read:v1")
			r.b.StartTool(r.op, r.step, asst, 0, call1, "safe", "builtin:read:v1")
			return r.b
		}},
		{"toolStarted with another name", s.CorruptInvalidReference, func() *st.Builder {
			r := startRun("hi")
			asst := r.reply(s.StopReasonToolUse, "", call1)
			r.b.StartTool(r.op, r.step, asst, 0, st.Call("call_1", "bash", `{}`), "never", "builtin:bash:v1")
			return r.b
		}},
		{"toolStarted for a missing call", s.CorruptInvalidReference, func() *st.Builder {
			r := startRun("hi")
			asst := r.reply(s.StopReasonToolUse, "", call1)
			r.b.StartTool(r.op, r.step, asst, 1, call1, "safe", "builtin:read:v1")
			return r.b
		}},
		{"result entry id not provisioned", s.CorruptInvalidReference, func() *st.Builder {
			r := startRun("hi")
			asst := r.reply(s.StopReasonToolUse, "", call1)
			started, _ := r.b.StartTool(r.op, r.step, asst, 0, call1, "safe", "builtin:read:v1")
			r.b.Commit(st.ToolResult(r.step, started, r.b.ID(), call1, s.ResultSuccess, "x"))
			return r.b
		}},
		{"result for another call", s.CorruptInvalidReference, func() *st.Builder {
			r := startRun("hi")
			asst := r.reply(s.StopReasonToolUse, "", call1, call2)
			started, result := r.b.StartTool(r.op, r.step, asst, 0, call1, "safe", "builtin:read:v1")
			r.b.Commit(st.ToolResult(r.step, started, result, call2, s.ResultSuccess, "x"))
			return r.b
		}},
		{"synthetic for a started call", s.CorruptInvalidTransition, func() *st.Builder {
			r := startRun("hi")
			asst := r.reply(s.StopReasonToolUse, "", call1)
			r.b.StartTool(r.op, r.step, asst, 0, call1, "safe", "builtin:read:v1")
			r.b.Commit(st.Synthetic(r.step, asst, 0, call1, s.ReasonAborted))
			return r.b
		}},
		{"truncated result for a toolUse reply", s.CorruptInvalidTransition, func() *st.Builder {
			r := startRun("hi")
			asst := r.reply(s.StopReasonToolUse, "", call1)
			r.b.Commit(st.Synthetic(r.step, asst, 0, call1, s.ReasonTruncated))
			return r.b
		}},
		{"truncated result with wrong content for a toolUse reply", s.CorruptInvalidTranscript, func() *st.Builder {
			// Both the content and the reason are wrong: the content check
			// comes first, as in the reference runtimes.
			r := startRun("hi")
			asst := r.reply(s.StopReasonToolUse, "", call1)
			f := st.Synthetic(r.step, asst, 0, call1, s.ReasonTruncated)
			f.Entry.(*s.SyntheticEntry).Content = "not the fixed text"
			r.b.Commit(f)
			return r.b
		}},
		{"unknownTool result for a length reply", s.CorruptInvalidTransition, func() *st.Builder {
			r := startRun("hi")
			asst := r.reply(s.StopReasonLength, "", call1)
			r.b.Commit(st.Synthetic(r.step, asst, 0, call1, s.ReasonUnknownTool))
			return r.b
		}},
		{"next step with an unanswered call", s.CorruptInvalidTransition, func() *st.Builder {
			r := startRun("hi")
			asst := r.reply(s.StopReasonToolUse, "", call1, call2)
			r.b.Commit(st.Synthetic(r.step, asst, 1, call2, s.ReasonUnknownTool))
			r.b.Attempt(r.op, s.StepAssistant, "")
			return r.b
		}},
		{"truncated completion with an unanswered call", s.CorruptInvalidTransition, func() *st.Builder {
			r := startRun("hi")
			asst := r.reply(s.StopReasonLength, "", call1, call2)
			r.b.Commit(st.Synthetic(r.step, asst, 0, call1, s.ReasonTruncated))
			r.b.Commit(st.Finished(r.op, s.OperationRun, s.OutcomeCompleted, s.CompletionTruncated, asst, nil))
			return r.b
		}},
		{"normal completion of a length reply", s.CorruptInvalidTransition, func() *st.Builder {
			r := startRun("hi")
			asst := r.reply(s.StopReasonLength, "", call1)
			r.b.Commit(st.Synthetic(r.step, asst, 0, call1, s.ReasonTruncated))
			r.b.Commit(st.Finished(r.op, s.OperationRun, s.OutcomeCompleted, s.CompletionNormal, asst, nil))
			return r.b
		}},
		{"completion with an open attempt", s.CorruptInvalidTransition, func() *st.Builder {
			r := startRun("hi")
			r.b.Commit(st.Finished(r.op, s.OperationRun, s.OutcomeFailed, "", "", &s.ErrorInfo{Code: "model_error", Message: "x"}))
			return r.b
		}},
		{"aborted without abortRequested", s.CorruptInvalidTransition, func() *st.Builder {
			r := startRun("hi")
			r.b.Commit(st.Record(&s.StepFailed{OperationID: r.op, StepID: r.step, AttemptID: r.attempt, Error: s.ErrorInfo{Code: "model_error", Message: "x"}}))
			r.b.Commit(st.Finished(r.op, s.OperationRun, s.OutcomeAborted, "", "", nil))
			return r.b
		}},
		{"aborted with an open attempt", s.CorruptInvalidTransition, func() *st.Builder {
			r := startRun("hi")
			r.b.Commit(st.Record(&s.AbortRequested{OperationID: r.op, OperationKind: s.OperationRun, Phase: s.PhaseModel, Reason: "escape"}))
			r.b.Commit(st.Finished(r.op, s.OperationRun, s.OutcomeAborted, "", "", nil))
			return r.b
		}},
		{"late reply after abortRequested", s.CorruptInvalidTransition, func() *st.Builder {
			r := startRun("hi")
			r.b.Commit(st.Record(&s.AbortRequested{OperationID: r.op, OperationKind: s.OperationRun, Phase: s.PhaseModel, Reason: "escape"}))
			r.reply(s.StopReasonStop, "too late")
			return r.b
		}},
		{"failed terminal after abortRequested", s.CorruptInvalidTransition, func() *st.Builder {
			r := startRun("hi")
			r.b.Commit(st.Record(&s.AbortRequested{OperationID: r.op, OperationKind: s.OperationRun, Phase: s.PhaseModel, Reason: "escape"}))
			r.b.Commit(st.Record(&s.StepFailed{OperationID: r.op, StepID: r.step, AttemptID: r.attempt, Error: s.ErrorInfo{Code: "aborted", Message: "Operation aborted"}}))
			r.b.Commit(st.Finished(r.op, s.OperationRun, s.OutcomeFailed, "", "", &s.ErrorInfo{Code: "model_error", Message: "x"}))
			return r.b
		}},
		{"abort of a tool call that does not exist", s.CorruptInvalidReference, func() *st.Builder {
			r := startRun("hi")
			r.reply(s.StopReasonToolUse, "", call1)
			r.b.Commit(st.Record(&s.AbortRequested{OperationID: r.op, OperationKind: s.OperationRun, Phase: s.PhaseTool, ToolCallID: "call_9", Reason: "escape"}))
			return r.b
		}},
		{"abort of a run in phase compact", s.CorruptInvalidTransition, func() *st.Builder {
			r := startRun("hi")
			r.b.Commit(st.Record(&s.AbortRequested{OperationID: r.op, OperationKind: s.OperationRun, Phase: s.PhaseCompact, Reason: "escape"}))
			return r.b
		}},
		{"usage owned by another operation's attempt", s.CorruptInvalidReference, func() *st.Builder {
			r := startRun("hi")
			r.reply(s.StopReasonStop, "hello")
			r.finish()
			op2 := r.b.Prompt("next")
			r.b.Commit(st.Usage(op2, r.attempt, "", s.Usage{Input: 1}))
			return r.b
		}},
		{"usage of an unknown operation", s.CorruptInvalidReference, func() *st.Builder {
			r := startRun("hi")
			r.b.Commit(st.Usage(r.b.ID(), r.attempt, "", s.Usage{Input: 1}))
			return r.b
		}},
		{"stepFailed of another operation's attempt", s.CorruptInvalidReference, func() *st.Builder {
			r := startRun("hi")
			r.reply(s.StopReasonStop, "hello")
			r.finish()
			op2 := r.b.Prompt("next")
			step2, _ := r.b.Attempt(op2, s.StepAssistant, "")
			r.b.Commit(st.Record(&s.StepFailed{OperationID: op2, StepID: step2, AttemptID: r.attempt, Error: s.ErrorInfo{Code: "model_error", Message: "x"}}))
			return r.b
		}},
		{"a second terminal", s.CorruptInvalidTransition, func() *st.Builder {
			r := startRun("hi")
			r.reply(s.StopReasonStop, "hello")
			r.finish()
			r.finish()
			return r.b
		}},
		{"an id reused as an operation id", s.CorruptDuplicateID, func() *st.Builder {
			r := startRun("hi")
			r.reply(s.StopReasonStop, "hello")
			r.finish()
			r.b.Commit(st.Entry(&s.UserEntry{Content: "next"}))
			r.b.Commit(st.Record(&s.RunStarted{OperationID: r.step, InputEntryID: r.b.Boundary()}))
			return r.b
		}},
		{"compaction while a run is open", s.CorruptInvalidTransition, func() *st.Builder {
			b := st.GenerateBuilder(st.Options{Facts: 60, Seed: 2})
			b.Prompt("open")
			plan, _ := b.PlanCompaction(2)
			b.StartCompaction(plan)
			return b
		}},
		{"compaction partition out of order", s.CorruptInvalidReference, func() *st.Builder {
			b := st.GenerateBuilder(st.Options{Facts: 60, Seed: 2})
			plan, ok := b.PlanCompaction(4)
			if !ok {
				panic("nothing to compact")
			}
			plan.Compacted[0], plan.Compacted[1] = plan.Compacted[1], plan.Compacted[0]
			b.StartCompaction(plan)
			return b
		}},
		{"compaction retained tail differs", s.CorruptInvalidReference, func() *st.Builder {
			b := st.GenerateBuilder(st.Options{Facts: 60, Seed: 2})
			plan, _ := b.PlanCompaction(4)
			op, result := b.StartCompaction(plan)
			_, att := b.Attempt(op, s.StepCompaction, "")
			entry := st.CompactionEntry(op, result, "summary", plan)
			changed := "changed"
			entry.Entry.(*s.CompactionEntry).RetainedTail[0].Message.Content = &changed
			b.Commit(st.Usage(op, att, "", s.Usage{}), entry)
			return b
		}},
		{"compaction cut inside a tool group", s.CorruptInvalidTranscript, func() *st.Builder {
			r := startRun("hi")
			asst := r.reply(s.StopReasonToolUse, "", call1)
			r.b.Commit(st.Synthetic(r.step, asst, 0, call1, s.ReasonUnknownTool))
			step2, att2 := r.b.Attempt(r.op, s.StepAssistant, "")
			r.b.Commit(st.Reply(step2, att2, s.StopReasonStop, "done"))
			r.finish()
			// Sources: user, assistant, tool, assistant; retain from the tool.
			src := r.b.Sources()
			plan := st.CompactionPlan{Compacted: src[:2], Retained: src[2:]}
			op, result := r.b.StartCompaction(plan)
			_, att := r.b.Attempt(op, s.StepCompaction, "")
			r.b.Commit(st.Usage(op, att, "", s.Usage{}), st.CompactionEntry(op, result, "summary", plan))
			return r.b
		}},
		{"compaction completed without its entry", s.CorruptInvalidTransition, func() *st.Builder {
			b := st.GenerateBuilder(st.Options{Facts: 60, Seed: 2})
			plan, _ := b.PlanCompaction(4)
			op, result := b.StartCompaction(plan)
			step, att := b.Attempt(op, s.StepCompaction, "")
			b.Commit(st.Record(&s.StepFailed{OperationID: op, StepID: step, AttemptID: att, Error: s.ErrorInfo{Code: "model_error", Message: "x"}}))
			b.Commit(st.Finished(op, s.OperationCompaction, s.OutcomeCompleted, "", result, nil))
			return b
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.build()
			_, c := s.Reduce(b.Bytes())
			if c == nil || c.Code != tc.code || c.Line != b.Lines() || c.Seq == 0 {
				t.Fatalf("Reduce = %v, want %s at line %d with a seq", c, tc.code, b.Lines())
			}
			t.Log(c)
		})
	}
}

// TestLegalVariations covers sequences that look odd but are valid.
func TestLegalVariations(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func() *st.Builder
	}{
		{"attempt 2 of an open attempt", func() *st.Builder {
			r := startRun("hi")
			step, att := r.b.Attempt(r.op, s.StepAssistant, r.step)
			r.b.Commit(st.Reply(step, att, s.StopReasonStop, "hello"))
			r.finish()
			return r.b
		}},
		{"repeated abortRequested", func() *st.Builder {
			r := startRun("hi")
			abort := st.Record(&s.AbortRequested{OperationID: r.op, OperationKind: s.OperationRun, Phase: s.PhaseModel, Reason: "escape"})
			r.b.Commit(abort)
			r.b.Commit(abort)
			r.b.Commit(st.Record(&s.StepFailed{OperationID: r.op, StepID: r.step, AttemptID: r.attempt, Error: s.ErrorInfo{Code: "aborted", Message: "Operation aborted"}}))
			r.b.Commit(st.Finished(r.op, s.OperationRun, s.OutcomeAborted, "", "", nil))
			return r.b
		}},
		{"usage after the terminal", func() *st.Builder {
			r := startRun("hi")
			r.b.Commit(st.Reply(r.step, r.attempt, s.StopReasonStop, "hello"))
			r.finish()
			r.b.Commit(st.Usage(r.op, r.attempt, "", s.Usage{Output: 3}))
			return r.b
		}},
		{"tool calls started in parallel, answered out of order", func() *st.Builder {
			r := startRun("hi")
			asst := r.reply(s.StopReasonToolUse, "", call1, call2)
			s1, r1 := r.b.StartTool(r.op, r.step, asst, 0, call1, "safe", "builtin:read:v1")
			s2, r2 := r.b.StartTool(r.op, r.step, asst, 1, call2, "never", "builtin:bash:v1")
			r.b.Commit(st.ToolResult(r.step, s2, r2, call2, s.ResultError, "exit 1"))
			r.b.Commit(st.ToolResult(r.step, s1, r1, call1, s.ResultSuccess, "package main"))
			step, att := r.b.Attempt(r.op, s.StepAssistant, "")
			r.b.Commit(st.Reply(step, att, s.StopReasonStop, "done"))
			r.finish()
			return r.b
		}},
		{"a failed run", func() *st.Builder {
			r := startRun("hi")
			r.b.Commit(st.Record(&s.StepFailed{OperationID: r.op, StepID: r.step, AttemptID: r.attempt, Error: s.ErrorInfo{Code: "model_error", Message: "HTTP 500"}}),
				st.Finished(r.op, s.OperationRun, s.OutcomeFailed, "", "", &s.ErrorInfo{Code: "model_error", Message: "provider request failed"}))
			return r.b
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.build()
			state, c := s.Reduce(b.Bytes())
			if c != nil {
				t.Fatal(c)
			}
			if !state.Idle() && tc.name != "" {
				t.Fatalf("operation still open: %+v", state.Operation)
			}
		})
	}
}
