package agent

import (
	"context"
	"fmt"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/recovery"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// Subagents (the task tool) need two things of the executor beyond one
// call at a time: several calls of one reply running together, and a
// started call that a crash left open being continued instead of answered
// "interrupted". Both are decided here from the durable state, next to the
// planner's action; the planner itself is unchanged.

// DefaultMaxParallel is how many concurrent calls of one reply run at once.
const DefaultMaxParallel = 4

// withToolUsage is a tool result entry with the tokens the call spent, as a
// usage fact the call owns (session.md: usage owned by a toolStartedId).
func withToolUsage(entry session.Fact, opID, toolStartedID string, u *session.Usage) []session.Fact {
	if u == nil || *u == (session.Usage{}) {
		return []session.Fact{entry}
	}
	return []session.Fact{entry, {Usage: &session.UsageFact{OperationID: opID, ToolStartedID: toolStartedID, Usage: *u}}}
}

// withUsage adds the tokens a call spent to an operation's (its footer and
// its lifecycle event count what the session's usage facts count).
func withUsage(total session.Usage, u *session.Usage) session.Usage {
	if u == nil {
		return total
	}
	return addUsage(total, *u)
}

// continuation turns the planner's "interrupted" for a started call of a
// Continuable tool into a continuation of that call with its persisted
// arguments (recovery.ModeReplay keeps its toolStarted). Only outside an
// abort: an abort answers every open call interrupted, as the contract
// says.
func (a *Agent) continuation(op *session.Operation, p recovery.AppendSynthetic) (recovery.StartTool, bool) {
	if op.AbortRequested || len(p.Results) != 1 {
		return recovery.StartTool{}, false
	}
	s := p.Results[0]
	if s.Reason != recovery.ReasonInterrupted || s.ToolStartedID == "" {
		return recovery.StartTool{}, false
	}
	c, ok := a.conf.byName[s.ToolName].(tools.Continuable)
	if !ok || !c.ContinuesAfterCrash() {
		return recovery.StartTool{}, false
	}
	ts, found := findStarted(op, s.ToolStartedID)
	if !found {
		return recovery.StartTool{}, false
	}
	return recovery.StartTool{
		Mode: recovery.ModeReplay, AssistantEntryID: s.AssistantEntryID, ToolIndex: s.ToolIndex,
		ToolStartedID: s.ToolStartedID, ToolName: s.ToolName, Arguments: ts.Arguments,
	}, true
}

func concurrent(t tools.Tool) bool {
	c, ok := t.(tools.Concurrent)
	return ok && c.RunsConcurrently()
}

// batch is the calls that start together with p: p and the unstarted calls
// right after it whose tools run concurrently, up to the configured
// limit. Nil when p runs alone.
func (a *Agent) batch(op *session.Operation, p recovery.StartTool) []recovery.StartTool {
	if p.Mode != recovery.ModeStart || !concurrent(a.conf.byName[p.ToolName]) || op.Assistant == nil {
		return nil
	}
	limit := a.cfg.MaxParallel
	if limit <= 0 {
		limit = DefaultMaxParallel
	}
	as := op.Assistant
	out := []recovery.StartTool{p}
	for i := p.ToolIndex + 1; i < len(as.ToolCalls) && len(out) < limit; i++ {
		call := as.ToolCalls[i]
		if as.Calls[i].Answered || as.Calls[i].ToolStartedID != "" || !concurrent(a.conf.byName[call.Function.Name]) {
			break
		}
		args := jsontext.Value(call.Function.Arguments)
		if !args.IsValid() || args.Kind() != '{' {
			break // the planner answers it invalidArguments in its turn
		}
		args = args.Clone()
		if args.Compact() != nil {
			break
		}
		out = append(out, recovery.StartTool{Mode: recovery.ModeStart, AssistantEntryID: as.EntryID, ToolIndex: i, ToolName: call.Function.Name, Arguments: args})
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// batchCall is one call of a batch.
type batchCall struct {
	tool    tools.Tool
	started session.ToolStarted
	id      string
	info    ToolInfo
	res     tools.Result
	dur     ToolOutcome
}

// runBatch starts the calls of b together: their intents in one
// transaction, then every effect at once in one tool phase (an Esc stops
// them all), then their results in one transaction, in toolIndex order.
// The calls are not put to the approval hook: a concurrent tool's own
// effects (a subagent's calls) are approved one by one.
func (a *Agent) runBatch(ctx context.Context, r *run, op *session.Operation, b []recovery.StartTool) error {
	calls := make([]*batchCall, len(b))
	var intent []session.Fact
	var evs []Event
	for i, p := range b {
		c := &batchCall{tool: a.conf.byName[p.ToolName], id: a.cfg.NewID()}
		call := op.Assistant.ToolCalls[p.ToolIndex]
		rp := c.tool.Replay()
		c.started = session.ToolStarted{
			OperationID: op.OperationID, StepID: op.Assistant.StepID, AssistantEntryID: op.Assistant.EntryID,
			ToolIndex: p.ToolIndex, ToolCallID: call.ID, ToolName: p.ToolName, Arguments: p.Arguments,
			Replay: rp.Policy, ReplayKey: rp.Key, EnvironmentIdentity: a.cfg.EnvironmentIdentity, ResultEntryID: a.cfg.NewID(),
		}
		def := c.tool.Definition()
		c.info = ToolInfo{
			OperationID: op.OperationID, StepID: op.Assistant.StepID, ToolStartedID: c.id, ToolCallID: call.ID,
			Tool: p.ToolName, Display: displayName(def.Display, def.Name), Replay: rp.Policy, ExecutionID: a.cfg.NewID(),
			ParentAttemptID: parentAttempt(op), Recovery: r.recovery, Arguments: call.Function.Arguments,
		}
		intent = append(intent, session.Fact{ID: c.id, Record: &c.started})
		evs = append(evs, ToolAdmitted{Tool: c.info}, ToolStarted{Tool: c.info})
		calls[i] = c
	}
	if aborted, err := a.commit(ctx, intent, evs...); err != nil || aborted {
		if err != nil {
			return fmt.Errorf("commit tool starts: %w", err)
		}
		return nil
	}
	for _, c := range calls {
		r.ownTools[c.id] = c.info
	}
	ap, pctx, ok := a.enter(ctx, session.PhaseTool, calls[0].started.ToolCallID)
	if !ok {
		return nil // the planner writes the interrupted results
	}
	// Checkpoints before and after each effect, as for a call alone.
	afters := make([]func(), len(calls))
	for i, c := range calls {
		afters[i] = a.beforeEffect(pctx, c.id, c.started.ToolName, c.started.Arguments)
	}
	a.runConcurrently(pctx, calls)
	for _, after := range afters {
		after()
	}
	a.end(ap)
	return a.settleBatch(ctx, r, calls)
}

// runConcurrently runs every call of the batch and waits for all of them.
func (a *Agent) runConcurrently(ctx context.Context, calls []*batchCall) {
	var wg sync.WaitGroup
	for _, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			begin := a.cfg.Now()
			c.res = runTool(tools.WithStartedID(ctx, c.id), c.tool, c.started.Arguments)
			c.res.Content = a.cfg.Scrub.Scrub(c.res.Content)
			c.dur = ToolOutcome{Duration: a.cfg.Now().Sub(begin), Partial: c.res.Content}
		}()
	}
	wg.Wait()
}

// settleBatch commits the results of a batch that ran, unless an abort
// became durable first (the planner then answers them interrupted).
func (a *Agent) settleBatch(ctx context.Context, r *run, calls []*batchCall) error {
	if a.abortDurable() {
		for _, c := range calls {
			r.cut[c.id] = c.dur
		}
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err // hard stop: the results stay unknown
	}
	var facts []session.Fact
	var evs []Event
	for _, c := range calls {
		result, outcome := session.ResultSuccess, "succeeded"
		if c.res.IsError {
			result, outcome = session.ResultError, "failed"
		}
		entry := session.Fact{ID: c.started.ResultEntryID, Entry: &session.ToolResultEntry{
			StepID: c.started.StepID, ToolCallID: c.started.ToolCallID, Content: c.res.Content,
			ToolName: c.started.ToolName, ToolStartedID: c.id, Result: result,
		}}
		facts = append(facts, withToolUsage(entry, c.started.OperationID, c.id, c.res.Usage)...)
		evs = append(evs, ToolCompleted{Tool: c.info, Outcome: ToolOutcome{Outcome: outcome, Duration: c.dur.Duration, Content: c.res.Content}})
	}
	aborted, err := a.settle(ctx, facts, evs...)
	if err != nil {
		return fmt.Errorf("commit tool results: %w", err)
	}
	if !aborted {
		for _, c := range calls {
			delete(r.ownTools, c.id)
			r.usage = withUsage(r.usage, c.res.Usage)
		}
	}
	return nil
}
