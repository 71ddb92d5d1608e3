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

// toolStep runs one tool call (or, for the built-in read after a crash,
// replays it) through its phases, top to bottom:
//
//  1. the call is planned (newCall); nothing is written;
//  2. PreToolUse hooks run in the tool phase, nothing committed
//     (preToolHooks); a block settles the call as an error (commitDenial);
//  3. the user approves it in the tool phase, which then stays open
//     (approve); a denial settles it as an error;
//  4. its intent, toolStarted, is committed;
//  5. its effect runs in the tool phase, which an Esc cancels (effect);
//  6. its result entry settles it (settleTool);
//  7. PostToolUse hooks run in a phase of their own (postToolHooks).
//
// A replay's intent is already durable: it skips 2 to 4.
func (a *Agent) toolStep(ctx context.Context, r *run, op *session.Operation, p recovery.StartTool) error {
	c, err := a.newCall(r, op, p)
	if err != nil {
		return err
	}
	var ap *activePhase // the tool phase, once open
	var pctx context.Context
	if !c.replay {
		dec, blocked, stopped, err := a.preToolHooks(ctx, op, &c.started)
		switch {
		case err != nil:
			return fmt.Errorf("PreToolUse hooks of %s: %w", p.ToolName, err)
		case stopped:
			return nil // abort is durable; the planner writes the aborted result
		case dec.Arguments != nil:
			c.info.Arguments = string(dec.Arguments) // what runs is what is shown
		}
		if blocked != "" {
			return a.commitDenial(ctx, c, blocked)
		}
		if ask := a.approvalRequest(c, dec); ask != nil {
			var done bool
			if ap, pctx, done, err = a.approve(ctx, c, *ask); done || err != nil {
				return err
			}
		}
	}
	if aborted, err := a.commit(ctx, c.intent(), c.events()...); err != nil || aborted {
		if ap != nil {
			a.end(ap)
		}
		if err != nil {
			return fmt.Errorf("commit tool start: %w", err)
		}
		return nil // abort is durable; the planner writes the aborted result
	}
	r.ownTools[c.id] = c.info
	if ap == nil {
		var ok bool
		if ap, pctx, ok = a.enter(ctx, session.PhaseTool, c.started.ToolCallID); !ok {
			return nil // abort is durable; the planner writes the interrupted result
		}
	}
	res, dur := a.effect(pctx, c)
	a.end(ap)
	if settled, err := a.settleTool(ctx, r, c, res, dur); !settled || err != nil {
		return err
	}
	a.postToolHooks(ctx, &c.started, res.Content, res.IsError)
	return nil
}

// toolCall is one call on its way through toolStep.
type toolCall struct {
	tool    tools.Tool
	replay  bool                // its intent is durable already
	id      string              // toolStartedId
	started session.ToolStarted // the intent, with the arguments that run
	info    ToolInfo            // the call as its events show it
}

// newCall plans the call p: the toolStarted record of a call that starts
// now (with fresh ids), or the durable one of a replay.
func (a *Agent) newCall(r *run, op *session.Operation, p recovery.StartTool) (*toolCall, error) {
	if op.Assistant == nil || p.ToolIndex < 0 || p.ToolIndex >= len(op.Assistant.ToolCalls) {
		return nil, fmt.Errorf("start tool: no call %d in the current assistant entry", p.ToolIndex)
	}
	tool, ok := a.conf.byName[p.ToolName]
	if !ok {
		return nil, fmt.Errorf("start tool: %s is not offered", p.ToolName)
	}
	call := op.Assistant.ToolCalls[p.ToolIndex]
	c := &toolCall{tool: tool, replay: p.Mode == recovery.ModeReplay, id: p.ToolStartedID}
	if c.replay {
		if c.started, ok = findStarted(op, p.ToolStartedID); !ok {
			return nil, fmt.Errorf("replay: tool start %s not found", p.ToolStartedID)
		}
	} else {
		rp := tool.Replay()
		c.started = session.ToolStarted{
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
		c.id = a.cfg.NewID()
	}
	def := tool.Definition()
	c.info = ToolInfo{
		OperationID: op.OperationID, StepID: c.started.StepID, ToolStartedID: c.id,
		ToolCallID: call.ID, Tool: p.ToolName, Display: displayName(def.Display, def.Name),
		Replay: c.started.Replay, ExecutionID: a.cfg.NewID(), ParentAttemptID: parentAttempt(op),
		Recovery: r.recovery, Arguments: call.Function.Arguments,
	}
	return c, nil
}

// intent is what is committed before the effect: nothing for a replay.
func (c *toolCall) intent() []session.Fact {
	if c.replay {
		return nil
	}
	return []session.Fact{{ID: c.id, Record: &c.started}}
}

// events are those of the committed intent.
func (c *toolCall) events() []Event {
	if c.replay {
		return []Event{ToolStarted{Tool: c.info}}
	}
	return []Event{ToolAdmitted{Tool: c.info}, ToolStarted{Tool: c.info}}
}

// effect runs the call in its tool phase (pctx): the checkpoint before,
// the tool, the checkpoint after, and the note added to its result. The
// result is scrubbed before it is committed, shown or sent.
func (a *Agent) effect(pctx context.Context, c *toolCall) (tools.Result, time.Duration) {
	pctx = tools.WithStartedID(pctx, c.id) // a subagent and a command's transaction are keyed by it
	name, args := c.started.ToolName, c.started.Arguments
	afterEffect := a.beforeEffect(pctx, c.id, name, args)
	begin := a.cfg.Now()
	res := runTool(pctx, c.tool, args)
	res.Content = a.cfg.Scrub.Scrub(res.Content)
	afterEffect()
	if note := a.resultNote(pctx, c.id, name, args, res.IsError); note != "" {
		res.Content += a.cfg.Scrub.Scrub(note)
	}
	return res, a.cfg.Now().Sub(begin)
}

// settleTool commits the result of a call whose effect ended, unless an
// abort or a hard stop came first; settled reports that it did.
func (a *Agent) settleTool(ctx context.Context, r *run, c *toolCall, res tools.Result, dur time.Duration) (settled bool, err error) {
	if a.abortDurable() {
		r.cut[c.id] = ToolOutcome{Duration: dur, Partial: res.Content}
		return false, nil // the planner writes the interrupted result
	}
	if ctx.Err() != nil {
		return false, ctx.Err() // hard stop: the result stays unknown
	}
	result := session.ResultSuccess
	outcome := "succeeded"
	if res.IsError {
		result, outcome = session.ResultError, "failed"
	}
	started := &c.started
	entry := session.Fact{ID: started.ResultEntryID, Entry: &session.ToolResultEntry{
		StepID: started.StepID, ToolCallID: started.ToolCallID, Content: res.Content,
		ToolName: started.ToolName, ToolStartedID: c.id, Result: result,
	}}
	completed := ToolOutcome{Outcome: outcome, Duration: dur, Content: res.Content}
	aborted, err := a.settle(ctx, withToolUsage(entry, started.OperationID, c.id, res.Usage), ToolCompleted{Tool: c.info, Outcome: completed})
	if err != nil {
		return false, fmt.Errorf("commit tool result: %w", err)
	}
	if aborted {
		return false, nil // the late result is discarded
	}
	delete(r.ownTools, c.id)
	r.usage = withUsage(r.usage, res.Usage)
	return true, nil
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
