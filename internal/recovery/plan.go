// Package recovery decides the next step of an interrupted operation.
//
// Plan is pure: it looks only at the reduced session state and at the
// configuration the process would resume with, performs no I/O and makes
// no ids. The executor applies the returned Action (committing the facts it
// describes through the store), reduces again, and asks Plan again until
// the session is idle or the plan is Blocked. The decision order is
// runtime.md §2, checked by the planner fixtures in
// conformance/session/planner-fixtures.
package recovery

import (
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// Fixed texts of the planner's terminals and closed attempts.
const (
	MessageAborted        = "Operation aborted"
	MessageProviderFailed = "provider request failed"
)

// Plan returns the next recovery action for state given the current
// configuration. state must come from session.Reduce (or the store); Plan
// panics on a state the reducer never produces (a settled run step
// without its assistant entry, an answered-call bookkeeping mismatch).
func Plan(state *session.State, current Current) Action {
	op := state.Operation
	// 1. Nothing open: the terminal-less finish, which appends nothing.
	if op == nil {
		return Finish{Outcome: session.OutcomeCompleted, Completion: session.CompletionNormal}
	}
	// 2. A durable abort request beats everything else.
	if op.AbortRequested {
		return planAbort(op)
	}
	step := op.Step
	// 3. Accepted but no model request recorded yet.
	if step == nil {
		if op.Kind == session.OperationCompaction {
			return StartStep{StepKind: session.StepCompaction, Attempt: 1, ContextThroughEntryID: op.InputThroughEntryID}
		}
		return StartStep{StepKind: session.StepAssistant, Attempt: 1, ContextThroughEntryID: op.InputEntryID}
	}
	switch step.Status {
	case session.StepFailedS:
		// 4. A closed, failed attempt fails the operation.
		return Finish{
			Outcome: session.OutcomeFailed,
			Error:   &session.ErrorInfo{Code: session.CodeModelError, Message: MessageProviderFailed},
		}
	case session.StepAttempting:
		// 5. The provider request died with the process.
		if step.Attempt >= 2 {
			return Blocked{Reason: BlockedAttemptsExhausted}
		}
		if step.ConfigurationDigest != current.ConfigurationDigest {
			return Blocked{Reason: BlockedConfigurationChanged}
		}
		return StartStep{StepKind: step.StepKind, Attempt: 2, StepID: step.StepID, ContextThroughEntryID: step.ContextThroughEntryID}
	}
	// The step settled.
	if op.Kind == session.OperationCompaction {
		// 6. The compaction entry is durable; only the terminal is missing.
		return Finish{Outcome: session.OutcomeCompleted, FinalEntryID: op.ResultEntryID}
	}
	a := op.Assistant
	if a == nil || a.EntryID != step.SettledEntryID {
		panic(fmt.Sprintf("recovery: settled step %s has no matching assistant entry", step.StepID))
	}
	// 7. Cut off by the token limit: nothing of it may run.
	if a.StopReason == session.StopReasonLength {
		if results := unanswered(op, a, session.ReasonTruncated); len(results) > 0 {
			return AppendSynthetic{Results: results}
		}
		return Finish{Outcome: session.OutcomeCompleted, Completion: session.CompletionTruncated, FinalEntryID: a.EntryID}
	}
	// 8. A final answer whose terminal did not land.
	if len(a.ToolCalls) == 0 {
		return Finish{Outcome: session.OutcomeCompleted, Completion: session.CompletionNormal, FinalEntryID: a.EntryID}
	}
	// Tool calls are settled in toolIndex order, so the first unanswered
	// call decides: later calls never run before an earlier one is known.
	for i, call := range a.Calls {
		if call.Answered {
			continue
		}
		if call.ToolStartedID == "" {
			return planUnstarted(a, i, current) // 9.
		}
		return planStarted(op, step, a, i, current) // 11.
	}
	// 10. Every call has a result: the next model step sees them all.
	return StartStep{StepKind: session.StepAssistant, Attempt: 1, ContextThroughEntryID: state.Boundary}
}

// planAbort reconciles an operation whose abortRequested is durable:
// close the open attempt, then answer every open call of the current
// assistant entry, then finish aborted.
func planAbort(op *session.Operation) Action {
	if op.Step != nil && op.Step.Status == session.StepAttempting {
		return CloseAttempt{Error: session.ErrorInfo{Code: session.CodeAborted, Message: MessageAborted}}
	}
	if a := op.Assistant; a != nil {
		if results := unanswered(op, a, session.ReasonAborted); len(results) > 0 {
			return AppendSynthetic{Results: results}
		}
	}
	return Finish{Outcome: session.OutcomeAborted}
}

// unanswered returns a synthetic result for every call of a without one,
// in toolIndex order: interrupted for started calls, reason for the rest.
func unanswered(op *session.Operation, a *session.AssistantState, reason session.SyntheticReason) []Synthetic {
	var out []Synthetic
	for i, call := range a.Calls {
		if call.Answered {
			continue
		}
		if call.ToolStartedID != "" {
			out = append(out, interrupted(toolState(op, call.ToolStartedID), a, i))
			continue
		}
		out = append(out, preExecution(a, i, reason))
	}
	return out
}

// planUnstarted handles the first unanswered call when it never started.
func planUnstarted(a *session.AssistantState, i int, current Current) Action {
	call := a.ToolCalls[i]
	if _, ok := current.tool(call.Function.Name); !ok {
		return AppendSynthetic{Results: []Synthetic{preExecution(a, i, session.ReasonUnknownTool)}}
	}
	args, ok := objectArguments(call.Function.Arguments)
	if !ok {
		return AppendSynthetic{Results: []Synthetic{preExecution(a, i, session.ReasonInvalidArguments)}}
	}
	return StartTool{Mode: ModeStart, AssistantEntryID: a.EntryID, ToolIndex: i, ToolName: call.Function.Name, Arguments: args}
}

// planStarted handles the first unanswered call when its toolStarted is
// durable but its result is not: the effect may or may not have happened.
// Only a tool declared safe both then and now, under the same replay key,
// runs again; anything else is interrupted or needs a human.
func planStarted(op *session.Operation, step *session.Step, a *session.AssistantState, i int, current Current) Action {
	ts := toolState(op, a.Calls[i].ToolStartedID)
	if step.ConfigurationDigest != current.ConfigurationDigest {
		return Blocked{Reason: BlockedConfigurationChanged}
	}
	if ts.EnvironmentIdentity != current.EnvironmentIdentity {
		return Blocked{Reason: BlockedEnvironmentChanged}
	}
	tool, ok := current.tool(ts.ToolName)
	if !ok {
		return Blocked{Reason: BlockedConfigurationChanged}
	}
	if ts.Replay == ReplaySafe {
		if tool.Replay == ReplaySafe && tool.ReplayKey == ts.ReplayKey {
			return StartTool{
				Mode:             ModeReplay,
				AssistantEntryID: a.EntryID,
				ToolIndex:        i,
				ToolStartedID:    ts.ToolStartedID,
				ToolName:         ts.ToolName,
				Arguments:        ts.Arguments.Clone(),
			}
		}
		return Blocked{Reason: BlockedReplayDeclarationChanged}
	}
	return AppendSynthetic{Results: []Synthetic{interrupted(ts, a, i)}}
}

func preExecution(a *session.AssistantState, i int, reason session.SyntheticReason) Synthetic {
	call := a.ToolCalls[i]
	return Synthetic{
		AssistantEntryID: a.EntryID,
		ToolIndex:        i,
		ToolCallID:       call.ID,
		ToolName:         call.Function.Name,
		Reason:           reason,
		Content:          session.SyntheticContent(reason),
	}
}

func interrupted(ts *session.ToolState, a *session.AssistantState, i int) Synthetic {
	return Synthetic{
		AssistantEntryID: a.EntryID,
		ToolIndex:        i,
		ToolCallID:       a.ToolCalls[i].ID,
		ToolName:         a.ToolCalls[i].Function.Name,
		ToolStartedID:    ts.ToolStartedID,
		ResultEntryID:    ts.ResultEntryID,
		Reason:           ReasonInterrupted,
		Content:          session.ContentInterrupted,
	}
}

// toolState finds the started tool with the given toolStarted id.
func toolState(op *session.Operation, id string) *session.ToolState {
	for i := range op.ToolCalls {
		if op.ToolCalls[i].ToolStartedID == id {
			return &op.ToolCalls[i]
		}
	}
	panic(fmt.Sprintf("recovery: call started by %s has no tool state", id))
}

// objectArguments parses a model's raw argument string. Only a strictly
// valid JSON object (no duplicate names, valid UTF-8 and escapes) is a
// tool input; it is returned compacted.
func objectArguments(raw string) (jsontext.Value, bool) {
	v := jsontext.Value(raw)
	if !v.IsValid() || v.Kind() != '{' {
		return nil, false
	}
	v = v.Clone()
	if err := v.Compact(); err != nil {
		return nil, false
	}
	return v, true
}
