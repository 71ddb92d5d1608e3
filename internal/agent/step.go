package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/recovery"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// modelStep runs one physical model request for a planned step: it commits
// the stepAttempt, streams the reply, and settles it as one transaction
// (entry + usage, plus the terminal when the reply is final).
func (a *Agent) modelStep(ctx context.Context, r *run, st *session.State, p recovery.StartStep) (*Result, error) {
	op := st.Operation
	stepID := p.StepID
	if stepID == "" {
		stepID = a.cfg.NewID()
	}
	attempt := &session.StepAttempt{
		OperationID:           op.OperationID,
		StepID:                stepID,
		AttemptID:             a.cfg.NewID(),
		StepKind:              p.StepKind,
		Attempt:               p.Attempt,
		ContextThroughEntryID: p.ContextThroughEntryID,
		ConfigurationSnapshot: a.conf.snapshot,
		ConfigurationDigest:   a.conf.digest,
	}
	req, err := a.request(st, p.StepKind)
	if err != nil {
		return nil, err
	}
	phase := session.PhaseModel
	if p.StepKind == session.StepCompaction {
		phase = session.PhaseCompact
	}
	info := ModelInfo{OperationID: op.OperationID, Kind: op.Kind, StepID: stepID, AttemptID: attempt.AttemptID, Attempt: p.Attempt, Recovery: r.recovery}
	pctx, done, ok, err := a.beginPhase(ctx, phase, "", []session.Fact{{Record: attempt}}, ModelStarted{Model: info})
	if err != nil {
		return nil, fmt.Errorf("commit step attempt: %w", err)
	}
	if !ok {
		return nil, nil // an abort is durable; the planner reconciles it
	}
	r.ownAttempts[attempt.AttemptID] = info
	started := a.cfg.Now()

	onDelta := func(d provider.Delta) {
		switch {
		case d.Retry != nil:
			a.emit(ModelRetrying{Model: info, Wait: *d.Retry})
		case p.StepKind == session.StepAssistant && d.Content != "":
			// A summary is not shown as it streams.
			a.emit(ModelDelta{Text: d.Content})
		}
	}
	resp, err := a.cfg.Provider.Stream(pctx, req, onDelta)
	done()
	dur := a.cfg.Now().Sub(started)

	if err != nil {
		if a.abortDurable() {
			return nil, nil // closeAttempt(aborted) comes from the planner
		}
		if ctx.Err() != nil {
			// Hard stop of this process without an abort: leave the attempt
			// open; the next resume decides (retry once).
			return nil, ctx.Err()
		}
		return a.failStep(ctx, r, op, info, dur, failureReason(err), errorType(err))
	}
	if reason := invalidReply(resp, p.StepKind); reason != "" {
		return a.failStep(ctx, r, op, info, dur, reason, "invalid_response")
	}
	if p.StepKind == session.StepAssistant {
		// Only assistant requests measure the context; a summary request
		// carries the old history it replaces.
		a.lastPromptTokens = resp.Usage.PromptTokens
	}
	usage := session.Usage{Input: resp.Usage.Input, Output: resp.Usage.Output, CacheRead: resp.Usage.CacheRead, CacheWrite: resp.Usage.CacheWrite}
	usageFact := session.Fact{Usage: &session.UsageFact{OperationID: op.OperationID, AttemptID: attempt.AttemptID, Usage: usage}}

	var facts []session.Fact
	var fin *session.OperationFinished
	if p.StepKind == session.StepCompaction {
		entry, err := a.compactionEntry(st, resp)
		if err != nil {
			return a.failStep(ctx, r, op, info, dur, err.Error(), "invalid_response")
		}
		facts = []session.Fact{usageFact, {ID: op.ResultEntryID, Entry: entry}}
	} else {
		entryID := a.cfg.NewID()
		entry := assistantEntry(stepID, attempt.AttemptID, resp)
		facts = []session.Fact{{ID: entryID, Entry: entry}, usageFact}
		if entry.StopReason == session.StopReasonStop {
			fin = &session.OperationFinished{OperationID: op.OperationID, OperationKind: op.Kind, Outcome: session.OutcomeCompleted, Completion: session.CompletionNormal, FinalEntryID: entryID}
			facts = append(facts, session.Fact{Record: fin})
		}
	}
	completed := ModelOutcome{Outcome: "succeeded", Duration: dur, Usage: &usage, PromptTokens: resp.Usage.PromptTokens}
	if p.StepKind == session.StepAssistant {
		completed.ContextWindow = a.contextWindow(ctx)
	}
	aborted, err := a.commitUnlessAborted(ctx, facts, ModelCompleted{Model: info, Outcome: completed})
	var rejected *store.RejectedError
	if errors.As(err, &rejected) {
		// The reply is not a legal transcript message (say, numbers past
		// 2^53): a failed step, not an attempt left open for a retry.
		return a.failStep(ctx, r, op, info, dur, "the model reply could not be recorded: "+rejected.Corruption.Detail, "invalid_response")
	}
	if err != nil {
		return nil, fmt.Errorf("commit model reply: %w", err)
	}
	if aborted {
		return nil, nil // the late reply is discarded; the abort wins
	}
	r.usage = addUsage(r.usage, usage)
	delete(r.ownAttempts, attempt.AttemptID)
	if fin != nil {
		return a.finished(r, fin), nil
	}
	return nil, nil
}

// failStep commits stepFailed and the failed terminal in one transaction: a
// live provider error is never retried automatically.
func (a *Agent) failStep(ctx context.Context, r *run, op *session.Operation, info ModelInfo, dur time.Duration, reason, errType string) (*Result, error) {
	e := session.ErrorInfo{Code: session.CodeModelError, Message: reason}
	fin := &session.OperationFinished{OperationID: op.OperationID, OperationKind: op.Kind, Outcome: session.OutcomeFailed, Error: &e}
	facts := []session.Fact{
		{Record: &session.StepFailed{OperationID: op.OperationID, StepID: info.StepID, AttemptID: info.AttemptID, Error: e}},
		{Record: fin},
	}
	failed := ModelOutcome{Outcome: "failed", Duration: dur, ErrorType: errType}
	aborted, err := a.commitUnlessAborted(ctx, facts, ModelCompleted{Model: info, Outcome: failed})
	if err != nil {
		return nil, fmt.Errorf("commit step failure: %w", err)
	}
	if aborted {
		return nil, nil
	}
	delete(r.ownAttempts, info.AttemptID)
	return a.finished(r, fin), nil
}

// abortDurable reports whether the open operation has a committed abort.
func (a *Agent) abortDurable() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	op := a.cfg.Log.State().Operation
	return op != nil && op.AbortRequested
}

// invalidReply returns why a settled reply cannot be persisted as a
// successful step, or "" when it can (runtime.md §1, §4).
func invalidReply(resp provider.Response, kind session.StepKind) string {
	text := resp.Content != nil && *resp.Content != ""
	if kind == session.StepCompaction {
		if resp.FinishReason != provider.FinishStop || !text || len(resp.ToolCalls) > 0 {
			return "the summary reply was not a complete text answer"
		}
		return ""
	}
	switch resp.FinishReason {
	case provider.FinishStop:
		if !text && len(resp.ToolCalls) == 0 {
			return "the model returned an empty reply"
		}
	case provider.FinishToolUse:
		if len(resp.ToolCalls) == 0 {
			return "the model reported tool use but sent no tool calls"
		}
	case provider.FinishLength:
		if len(resp.ToolCalls) == 0 {
			return "the reply was cut off by the model token limit"
		}
	default:
		return fmt.Sprintf("unsupported finish reason %q", resp.FinishReason)
	}
	return ""
}

func assistantEntry(stepID, attemptID string, resp provider.Response) *session.AssistantEntry {
	e := &session.AssistantEntry{StepID: stepID, AttemptID: attemptID, Content: resp.Content}
	if e.Content != nil && *e.Content == "" && len(resp.ToolCalls) > 0 {
		e.Content = nil
	}
	switch {
	case resp.FinishReason == provider.FinishLength:
		e.StopReason = session.StopReasonLength
	case len(resp.ToolCalls) > 0:
		// Some providers finish with "stop" and still send calls; the calls
		// decide.
		e.StopReason = session.StopReasonToolUse
	default:
		e.StopReason = session.StopReasonStop
	}
	seen := make(map[string]bool, len(resp.ToolCalls))
	for i, c := range resp.ToolCalls {
		// The format needs non-empty ids, unique within the message, and
		// names; a provider that breaks that still gets a well-formed entry
		// (and an unknownTool result for a missing name).
		if c.ID == "" || seen[c.ID] {
			c.ID = fmt.Sprintf("call_%d", i)
			for n := 0; seen[c.ID]; n++ {
				c.ID = fmt.Sprintf("call_%d_%d", i, n)
			}
		}
		seen[c.ID] = true
		if c.Name == "" {
			c.Name = "(missing)"
		}
		e.ToolCalls = append(e.ToolCalls, session.ToolCall{ID: c.ID, Type: "function", Function: session.FunctionCall{Name: c.Name, Arguments: c.Arguments}})
	}
	return e
}

// failureReason is the short, safe text persisted in stepFailed.
func failureReason(err error) string {
	var pe *provider.Error
	if errors.As(err, &pe) && pe.Message != "" {
		return pe.Message
	}
	return "provider request failed: " + err.Error()
}

func errorType(err error) string {
	var pe *provider.Error
	if errors.As(err, &pe) && pe.Kind != "" {
		return pe.Kind
	}
	return "provider_error"
}

func addUsage(a, b session.Usage) session.Usage {
	return session.Usage{Input: a.Input + b.Input, Output: a.Output + b.Output, CacheRead: a.CacheRead + b.CacheRead, CacheWrite: a.CacheWrite + b.CacheWrite}
}
