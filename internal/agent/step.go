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

// sent is a physical model request of a planned step that came back with
// a reply (or a provider error) while its attempt is still open.
type sent struct {
	info ModelInfo
	dur  time.Duration
	resp provider.Response
	err  error // a provider error; the attempt still needs settling
}

// assistantStep is the step executor of a run, in its phases, top to
// bottom: the request is built from the state (assistantRequest), its
// attempt is committed and the reply streamed (stream), and what came
// back is settled in one transaction (settleAttempt). The tools the reply
// calls are the planner's next steps, each one toolStep.
func (a *Agent) assistantStep(ctx context.Context, r *run, st *session.State, p recovery.StartStep) (*Result, error) {
	req := a.assistantRequest(st)
	s, err := a.stream(ctx, r, st.Operation, p, req)
	if s == nil {
		return nil, err
	}
	return a.settleAttempt(ctx, r, st, p, s)
}

// settleAttempt settles what the stream brought back: a context overflow
// hands the run to the compaction chain (endForCompaction); anything else
// is decided (settlement) and then committed once (commitSettlement).
func (a *Agent) settleAttempt(ctx context.Context, r *run, st *session.State, p recovery.StartStep, s *sent) (*Result, error) {
	var pe *provider.Error
	if errors.As(s.err, &pe) && pe.Kind == provider.KindContextOverflow {
		if res, handled, err := a.endForCompaction(ctx, r, st, s); handled || err != nil {
			return res, err
		}
	}
	set, err := a.settlement(ctx, p.StepKind, s)
	if err != nil {
		return nil, err
	}
	return a.commitSettlement(ctx, r, s, set)
}

// settlement is what settles an attempt in one transaction: its facts,
// how the model request ended (model.completed, reported with them), and
// the terminal among the facts when the operation ends here. Without
// facts the attempt is left open for the planner's retry.
type settlement struct {
	facts   []session.Fact
	outcome ModelOutcome
	fin     *session.OperationFinished
}

// settlement decides what settles s: a failed request, or a reply that is
// not a valid one, fails the step (stepFailure); a reply with too many
// tool calls is refused (tooManyCalls); otherwise its entry, usage and,
// when final, the terminal settle it together.
func (a *Agent) settlement(ctx context.Context, kind session.StepKind, s *sent) (settlement, error) {
	if s.err != nil {
		return stepFailure(s, failureReason(s.err), errorType(s.err)), nil
	}
	resp := s.resp
	if reason := invalidReply(resp, kind); reason != "" {
		errType := "invalid_response"
		if resp.FinishReason == provider.FinishRefusal {
			errType = "refusal"
		}
		return stepFailure(s, reason, errType), nil
	}
	if n, max := len(resp.ToolCalls), a.maxToolCalls(); n > max {
		return tooManyCalls(s, n, max), nil
	}
	a.lastPromptTokens = resp.Usage.PromptTokens
	usage := sessionUsage(resp.Usage)
	entryID := a.cfg.NewID()
	// Durable before the entry: a committed entry always finds them.
	if err := a.cfg.Reasoning.Put(entryID, resp.ReasoningDetails); err != nil {
		return settlement{}, fmt.Errorf("record reasoning details: %w", err)
	}
	entry := assistantEntry(s.info.StepID, s.info.AttemptID, resp)
	facts := []session.Fact{{ID: entryID, Entry: entry}, {Usage: &session.UsageFact{OperationID: s.info.OperationID, AttemptID: s.info.AttemptID, Usage: usage}}}
	var fin *session.OperationFinished
	if entry.StopReason == session.StopReasonStop {
		fin = &session.OperationFinished{OperationID: s.info.OperationID, OperationKind: s.info.Kind, Outcome: session.OutcomeCompleted, Completion: session.CompletionNormal, FinalEntryID: entryID}
		facts = append(facts, session.Fact{Record: fin})
	}
	completed := ModelOutcome{Outcome: "succeeded", Duration: s.dur, Usage: &usage, PromptTokens: resp.Usage.PromptTokens, ContextWindow: a.contextWindow(ctx), Cost: resp.Usage.Cost, ReasoningTokens: resp.Usage.Reasoning, Sources: resp.Sources}
	return settlement{facts: facts, outcome: completed, fin: fin}, nil
}

// commitSettlement commits set, unless an abort won the race, and books
// it to the run; a settlement without facts is only reported. A reply
// the store rejects is not a legal transcript message (say, numbers past
// 2^53): it fails the step instead, not an attempt left open for a retry.
func (a *Agent) commitSettlement(ctx context.Context, r *run, s *sent, set settlement) (*Result, error) {
	done := ModelCompleted{Model: s.info, Outcome: set.outcome}
	if set.facts == nil {
		a.emit(done)
		delete(r.ownAttempts, s.info.AttemptID)
		return nil, nil
	}
	reply := set.outcome.Outcome == "succeeded"
	aborted, err := a.settle(ctx, set.facts, done)
	var rejected *store.RejectedError
	if reply && errors.As(err, &rejected) {
		return a.commitSettlement(ctx, r, s, stepFailure(s, "the model reply could not be recorded: "+rejected.Corruption.Detail, "invalid_response"))
	}
	switch {
	case err != nil && reply:
		return nil, fmt.Errorf("commit model reply: %w", err)
	case err != nil:
		return nil, fmt.Errorf("commit step failure: %w", err)
	case aborted:
		return nil, nil // a late reply is discarded; the abort wins
	}
	if set.outcome.Usage != nil {
		r.usage = addUsage(r.usage, *set.outcome.Usage)
	}
	delete(r.ownAttempts, s.info.AttemptID)
	if set.fin != nil {
		return a.finished(r, set.fin), nil
	}
	return nil, nil
}

// DefaultMaxToolCalls is the most tool calls one reply may ask for unless
// configured otherwise (--max-tool-calls).
const DefaultMaxToolCalls = 64

func (a *Agent) maxToolCalls() int {
	if a.cfg.MaxToolCalls > 0 {
		return a.cfg.MaxToolCalls
	}
	return DefaultMaxToolCalls
}

// tooManyCalls refuses a reply that asks for more tool calls than the
// limit: none of them runs. The first attempt is left open, so the planner
// asks again with the contract's one retry (attempt 2, same step); a second
// such reply fails the step with a reason that says what to change.
func tooManyCalls(s *sent, n, max int) settlement {
	if s.info.Attempt < 2 {
		return settlement{outcome: ModelOutcome{Outcome: "failed", Duration: s.dur, ErrorType: "too_many_tool_calls"}}
	}
	reason := fmt.Sprintf("the model asked for %d tool calls in one reply, more than the limit of %d (--max-tool-calls); none was run", n, max)
	return stepFailure(s, reason, "too_many_tool_calls")
}

// stepFailure is stepFailed and the failed terminal, with the usage the
// failed reply reported (billed, so recorded).
func stepFailure(s *sent, reason, errType string) settlement {
	e := session.ErrorInfo{Code: session.CodeModelError, Message: reason}
	fin := &session.OperationFinished{OperationID: s.info.OperationID, OperationKind: s.info.Kind, Outcome: session.OutcomeFailed, Error: &e}
	var facts []session.Fact
	failed := ModelOutcome{Outcome: "failed", Duration: s.dur, ErrorType: errType}
	if billed, ok := billedUsage(s); ok {
		usage := sessionUsage(billed)
		facts = append(facts, session.Fact{Usage: &session.UsageFact{OperationID: s.info.OperationID, AttemptID: s.info.AttemptID, Usage: usage}})
		failed.Usage, failed.Cost, failed.ReasoningTokens = &usage, billed.Cost, billed.Reasoning
	}
	facts = append(facts,
		session.Fact{Record: &session.StepFailed{OperationID: s.info.OperationID, StepID: s.info.StepID, AttemptID: s.info.AttemptID, Error: e}},
		session.Fact{Record: fin})
	return settlement{facts: facts, outcome: failed, fin: fin}
}

// billedUsage is the usage a failed step's reply reported: that of a reply
// that arrived but cannot settle the step (cut off, declined, invalid), or
// what a provider error carried. ok is false when nothing was reported.
func billedUsage(s *sent) (provider.Usage, bool) {
	u := s.resp.Usage
	if s.err != nil {
		var pe *provider.Error
		if !errors.As(s.err, &pe) || pe.Usage == nil {
			return provider.Usage{}, false
		}
		u = *pe.Usage
	}
	for _, n := range []int64{u.Input, u.Output, u.CacheRead, u.CacheWrite} {
		if n < 0 || n > 1<<53-1 {
			return provider.Usage{}, false // not recordable (the failure may be just that)
		}
	}
	return u, sessionUsage(u) != session.Usage{}
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
	case provider.FinishRefusal:
		return DeclinedPrefix + " (" + resp.StopDetail + ")"
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

// DeclinedPrefix starts the stepFailed message of a reply the model
// declined to give (Anthropic's refusal, OpenAI's content_filter); the
// provider's reason follows in parentheses.
const DeclinedPrefix = "the model declined to answer"

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

func sessionUsage(u provider.Usage) session.Usage {
	return session.Usage{Input: u.Input, Output: u.Output, CacheRead: u.CacheRead, CacheWrite: u.CacheWrite}
}

func addUsage(a, b session.Usage) session.Usage {
	return session.Usage{Input: a.Input + b.Input, Output: a.Output + b.Output, CacheRead: a.CacheRead + b.CacheRead, CacheWrite: a.CacheWrite + b.CacheWrite}
}
