package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/recovery"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// toolStep starts (or, for the built-in read, replays) one tool call: the
// toolStarted intent is durable before the effect starts, and the result
// entry settles it.
func (a *Agent) toolStep(ctx context.Context, r *run, op *session.Operation, p recovery.StartTool) error {
	if op.Assistant == nil || p.ToolIndex < 0 || p.ToolIndex >= len(op.Assistant.ToolCalls) {
		return fmt.Errorf("start tool: no call %d in the current assistant entry", p.ToolIndex)
	}
	tool, ok := a.conf.byName[p.ToolName]
	if !ok {
		return fmt.Errorf("start tool: %s is not offered", p.ToolName)
	}
	call := op.Assistant.ToolCalls[p.ToolIndex]
	rp := tool.Replay()

	var started session.ToolStarted
	var intent []session.Fact
	switch p.Mode {
	case recovery.ModeReplay:
		ts, found := findStarted(op, p.ToolStartedID)
		if !found {
			return fmt.Errorf("replay: tool start %s not found", p.ToolStartedID)
		}
		started = ts
	default:
		started = session.ToolStarted{
			OperationID:         op.OperationID,
			StepID:              op.Assistant.StepID,
			AssistantEntryID:    op.Assistant.EntryID,
			ToolIndex:           p.ToolIndex,
			ToolCallID:          call.ID,
			ToolName:            p.ToolName,
			Arguments:           p.Arguments,
			Replay:              rp.Policy,
			ReplayKey:           rp.Key,
			EnvironmentIdentity: a.cfg.EnvironmentIdentity,
			ResultEntryID:       a.cfg.NewID(),
		}
		p.ToolStartedID = a.cfg.NewID()
		intent = []session.Fact{{ID: p.ToolStartedID, Record: &started}}
	}

	var dec ToolDecision
	var blocked string
	if p.Mode != recovery.ModeReplay {
		var stopped bool
		var err error
		if dec, blocked, stopped, err = a.preToolHooks(ctx, op, &started); err != nil {
			return fmt.Errorf("PreToolUse hooks of %s: %w", p.ToolName, err)
		}
		if stopped {
			return nil // abort is durable; the planner writes the aborted result
		}
	}
	def := tool.Definition()
	info := ToolInfo{
		OperationID: op.OperationID, StepID: started.StepID, ToolStartedID: p.ToolStartedID,
		ToolCallID: call.ID, Tool: p.ToolName, Display: displayName(def.Display, def.Name),
		Replay: started.Replay, ExecutionID: a.cfg.NewID(), ParentAttemptID: parentAttempt(op),
		Recovery: r.recovery, Arguments: call.Function.Arguments,
	}
	if dec.Arguments != nil {
		info.Arguments = string(dec.Arguments) // what runs is what is shown
	}
	var evs []Event
	if p.Mode != recovery.ModeReplay {
		evs = append(evs, ToolAdmitted{Tool: info})
	}
	evs = append(evs, ToolStarted{Tool: info})
	if blocked != "" {
		return a.commitDenial(ctx, &started, intent, blocked, evs...)
	}
	var ask *ApprovalRequest
	if p.Mode != recovery.ModeReplay && dec.Decision != DecisionAllow && (rp.Policy != tools.ReplaySafe || dec.Decision == DecisionAsk) {
		ask = &ApprovalRequest{OperationID: op.OperationID, ToolCallID: call.ID, Tool: p.ToolName, Display: info.Display,
			Builtin: def.DefinitionIdentity == "", Arguments: started.Arguments, Recovery: r.recovery}
	}
	ap, pctx, ok, err := a.beginToolPhase(ctx, ask, &started, intent, evs...)
	if err != nil {
		return fmt.Errorf("commit tool start: %w", err)
	}
	if !ok {
		return nil // abort is durable; the planner writes the aborted result
	}
	r.ownTools[p.ToolStartedID] = info
	pctx = tools.WithStartedID(pctx, p.ToolStartedID) // a subagent and a command's transaction are keyed by it
	afterEffect := a.beforeEffect(pctx, p.ToolStartedID, p.ToolName, started.Arguments)
	begin := a.cfg.Now()
	res := runTool(pctx, tool, started.Arguments)
	res.Content = a.cfg.Scrub.Scrub(res.Content) // before it is committed, shown or sent
	afterEffect()
	if note := a.resultNote(pctx, p.ToolStartedID, p.ToolName, started.Arguments, res.IsError); note != "" {
		res.Content += a.cfg.Scrub.Scrub(note)
	}
	a.endPhase(ap)
	dur := a.cfg.Now().Sub(begin)
	return a.settleTool(ctx, r, p.ToolStartedID, &started, info, res, dur)
}

// settleTool commits the result of a call whose effect ended, unless an
// abort or a hard stop came first, then runs its PostToolUse hooks.
func (a *Agent) settleTool(ctx context.Context, r *run, toolStartedID string, started *session.ToolStarted, info ToolInfo, res tools.Result, dur time.Duration) error {
	if a.abortDurable() {
		r.cut[toolStartedID] = ToolOutcome{Duration: dur, Partial: res.Content}
		return nil // the planner writes the interrupted result
	}
	if ctx.Err() != nil {
		return ctx.Err() // hard stop: the result stays unknown
	}
	result := session.ResultSuccess
	outcome := "succeeded"
	if res.IsError {
		result, outcome = session.ResultError, "failed"
	}
	entry := session.Fact{ID: started.ResultEntryID, Entry: &session.ToolResultEntry{
		StepID: started.StepID, ToolCallID: started.ToolCallID, Content: res.Content,
		ToolName: started.ToolName, ToolStartedID: toolStartedID, Result: result,
	}}
	completed := ToolOutcome{Outcome: outcome, Duration: dur, Content: res.Content}
	aborted, err := a.commit(ctx, commitReq{facts: withToolUsage(entry, started.OperationID, toolStartedID, res.Usage), settles: true, events: []Event{ToolCompleted{Tool: info, Outcome: completed}}})
	if err != nil {
		return fmt.Errorf("commit tool result: %w", err)
	}
	if aborted {
		return nil // the late result is discarded
	}
	delete(r.ownTools, toolStartedID)
	r.usage = withUsage(r.usage, res.Usage)
	a.postToolHooks(ctx, started, res.Content, res.IsError)
	return nil
}

func findStarted(op *session.Operation, id string) (session.ToolStarted, bool) {
	for _, t := range op.ToolCalls {
		if t.ToolStartedID == id {
			return t.ToolStarted, true
		}
	}
	return session.ToolStarted{}, false
}

// parentAttempt is the model attempt whose reply asked for the calls.
func parentAttempt(op *session.Operation) string {
	if op.Step != nil {
		return op.Step.AttemptID
	}
	return ""
}

func displayName(display, name string) string {
	if display != "" {
		return display
	}
	return name
}

// runTool runs one tool, turning a panic into an error result: a broken
// tool must not take the session down with it, and its call still gets the
// one result the transcript needs.
func runTool(ctx context.Context, t tools.Tool, args jsontext.Value) (res tools.Result) {
	defer func() {
		if r := recover(); r != nil {
			res = tools.Result{Content: fmt.Sprintf("Error: the %s tool failed unexpectedly: %v", t.Definition().Name, r), IsError: true}
		}
	}()
	return t.Run(ctx, args)
}
