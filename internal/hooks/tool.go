package hooks

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/cctools"
)

// BeforeTool runs the PreToolUse hooks of a call about to start, unless
// its decision is already recorded (a resume): then that decision and
// input are used and no hook runs. A decision is recorded, synced, before
// it is returned.
func (r *Runner) BeforeTool(ctx context.Context, call agent.HookCall) (agent.ToolDecision, error) {
	l := r.current()
	if l == nil {
		return agent.ToolDecision{}, nil
	}
	r.keepOriginal(call)
	if d, reason, input, ok := l.Pre(call.Key); ok {
		r.markStarted(call.Key)
		return agent.ToolDecision{Decision: d, Reason: reason, Arguments: input}, nil
	}
	names, in := r.toolInput(call)
	v := r.fire(ctx, PreToolUse, names, &in)
	r.markStarted(call.Key)
	if !v.ran {
		return agent.ToolDecision{}, nil
	}
	if err := ctx.Err(); err != nil {
		return agent.ToolDecision{}, err // stopped mid-hook: nothing decided
	}
	dec := r.decide(call, v)
	rec := record{Pre: call.Key, Decision: dec.Decision, Reason: dec.Reason, Input: dec.Arguments}
	if err := l.add(rec); err != nil {
		return agent.ToolDecision{}, err
	}
	return dec, nil
}

// decide turns the PreToolUse verdict into the call's decision.
func (r *Runner) decide(call agent.HookCall, v verdict) agent.ToolDecision {
	switch {
	case v.block:
		return agent.ToolDecision{Decision: agent.DecisionDeny, Reason: joinReasons(v.reason, "a PreToolUse hook exited 2")}
	case v.decision == agent.DecisionDeny:
		return agent.ToolDecision{Decision: agent.DecisionDeny, Reason: v.decisionReason}
	case v.stop:
		return agent.ToolDecision{Decision: agent.DecisionDeny, Reason: firstLine(v.stopReason, "a PreToolUse hook stopped processing")}
	case len(v.failed) > 0 && r.opt.FailClosed:
		return agent.ToolDecision{Decision: agent.DecisionDeny, Reason: "a PreToolUse hook failed and hook_fail_closed is set: " + strings.Join(v.failed, "; ")}
	}
	dec := agent.ToolDecision{Decision: v.decision, Reason: v.decisionReason}
	if len(v.updated) > 0 {
		args, err := cctools.FromClaude(call.Tool, v.updated)
		if err != nil {
			return agent.ToolDecision{Decision: agent.DecisionDeny, Reason: fmt.Sprintf("a PreToolUse hook's updatedInput cannot be used: %v", err)}
		}
		dec.Arguments = args
	}
	return dec
}

// AfterTool runs the PostToolUse (or, for an error result,
// PostToolUseFailure) hooks of a committed result once: the intent is
// recorded before they start, and a call whose hooks already started is
// never run again. What they tell the model goes with the result.
func (r *Runner) AfterTool(ctx context.Context, call agent.HookCall, res agent.HookResult) {
	ev := PostToolUse
	if res.IsError {
		ev = PostToolUseFailure
	}
	l := r.current()
	names, in := r.toolInput(call)
	if l == nil || !r.matchAny(ev, names) || l.PostState(call.Key) != "" {
		return
	}
	if err := l.add(record{Post: call.Key, State: "started"}); err != nil {
		r.report(fmt.Sprintf("hook %s: not run: %v", ev, err))
		return
	}
	if res.IsError {
		in.Error = cctools.FailureError(call.Tool, res.Content)
		f := false
		in.IsInterrupt = &f
	} else {
		in.ToolResponse = r.response(call, res.Content)
	}
	in.DurationMS = r.duration(call.Key)
	v := r.fire(ctx, ev, names, &in)
	if ctx.Err() != nil {
		// Stopped (Esc): said now, and recorded so that no resume says it
		// again. A process that dies here leaves "started" for the resume.
		r.report(fmt.Sprintf("the %s hooks of tool call %s were stopped; they are not run again", ev, call.ToolCallID))
		_ = l.add(record{Post: call.Key, State: "interrupted"})
		return
	}
	var texts []string
	if v.block {
		texts = append(texts, fmt.Sprintf("%s hook feedback:\n%s", ev, joinReasons(v.reason, "(no reason given)")))
	}
	for _, c := range v.context {
		texts = append(texts, fmt.Sprintf("%s hook additional context:\n%s", ev, c))
	}
	if len(texts) > 0 {
		if err := l.add(record{Context: res.EntryID, Text: strings.Join(texts, "\n\n")}); err != nil {
			r.report(fmt.Sprintf("hook %s: what it said for the model is lost: %v", ev, err))
		}
	}
	if err := l.add(record{Post: call.Key, State: "done"}); err != nil {
		r.report(fmt.Sprintf("hook %s: %v", ev, err))
	}
}

// markStarted notes when a call starts (its PreToolUse hooks are done),
// for the duration_ms of its PostToolUse.
func (r *Runner) markStarted(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started == nil {
		r.started = map[string]time.Time{}
	}
	r.started[key] = time.Now()
}

// duration is how long the call has run; nil when its start is not
// known (a resume after a crash).
func (r *Runner) duration(key string) *int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.started[key]
	if !ok {
		return nil
	}
	delete(r.started, key)
	ms := time.Since(t).Milliseconds()
	return &ms
}

func (r *Runner) matchAny(ev Event, names []string) bool {
	for _, h := range r.on(ev) {
		if h.Matches(names...) {
			return true
		}
	}
	return false
}

// Stopped runs the Stop hooks after a completed run: a block (exit 2 or
// decision "block") is the prompt of one more run, its reason for the
// model.
func (r *Runner) Stopped(ctx context.Context, answer string, active bool) string {
	if r.subagent {
		return r.SubagentStopped(ctx, answer, active)
	}
	v := r.fire(ctx, Stop, nil, &Input{StopHookActive: &active, LastAssistantMessage: answer})
	if !v.block || v.stop || ctx.Err() != nil {
		return ""
	}
	reason := joinReasons(v.reason, "A Stop hook asked you to continue.")
	r.report("hook Stop: continuing: " + firstLine(reason, ""))
	return "Stop hook feedback:\n" + reason
}

// SubagentStopped runs the SubagentStop hooks when a subagent answered;
// like Stopped, a non-empty result is what the subagent is told to go on
// with (a Child runner's Stopped).
func (r *Runner) SubagentStopped(ctx context.Context, answer string, active bool) string {
	v := r.fire(ctx, SubagentStop, nil, &Input{StopHookActive: &active, LastAssistantMessage: answer})
	if !v.block || v.stop || ctx.Err() != nil {
		return ""
	}
	return "SubagentStop hook feedback:\n" + joinReasons(v.reason, "A SubagentStop hook asked you to continue.")
}

// Permission is a PermissionRequest hook's answer: Decided is false when
// no hook decided and the user is asked.
type Permission struct {
	Decided bool
	Allow   bool
	Message string
}

// PermissionRequested runs the PermissionRequest hooks when the user
// would be asked to approve a call.
func (r *Runner) PermissionRequested(ctx context.Context, call agent.HookCall) Permission {
	names, in := r.toolInput(call)
	v := r.fire(ctx, PermissionRequest, names, &in)
	switch {
	case v.block:
		return Permission{Decided: true, Message: joinReasons(v.reason, "a PermissionRequest hook denied it")}
	case v.permission != nil:
		return Permission{Decided: true, Allow: v.permission.Behavior == "allow", Message: v.permission.Message}
	}
	return Permission{}
}
