package agent

import (
	"context"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// HookRunner runs the user's hooks (internal/hooks) at the points where
// the facts they are about are made. Whatever a hook decides or adds is
// kept beside the session by the runner, never in it: the session format
// is shared.
type HookRunner interface {
	// PromptSubmitted runs before a prompt is accepted; entryID is the id
	// its user entry will get. A non-empty block refuses the prompt: it is
	// shown to the user and nothing is committed.
	PromptSubmitted(ctx context.Context, entryID, prompt string) (block string, err error)
	// BeforeTool decides a call that is about to start, before any
	// approval is asked. The decision is durable before it returns, and
	// asking again for the same call (a resume) returns the recorded one
	// without running a hook.
	BeforeTool(ctx context.Context, call HookCall) (ToolDecision, error)
	// AfterTool runs once the call's result entry is committed.
	AfterTool(ctx context.Context, call HookCall, result HookResult)
	// Stopped runs when a run completed with a final answer. A non-empty
	// continuation is the next prompt, accepted as an ordinary new run;
	// active says the run being stopped was such a continuation.
	Stopped(ctx context.Context, answer string, active bool) (continuation string)
	// Context is what hooks added for the model at the message of entryID
	// (a user prompt, a tool result), or "".
	Context(entryID string) string
}

// HookCall is a tool call as the hooks see it.
type HookCall struct {
	// Key names the call across processes: assistant entry id "/" call id.
	Key        string
	ToolCallID string
	Tool       string // tiny-go's name
	Arguments  jsontext.Value
}

// Tool decisions of a PreToolUse hook.
const (
	DecisionNone  = ""
	DecisionAllow = "allow" // no approval is asked
	DecisionDeny  = "deny"  // the call is settled as blocked, not run
	DecisionAsk   = "ask"   // the user is asked even where nobody would be
)

// ToolDecision is what the PreToolUse hooks decided for one call.
type ToolDecision struct {
	Decision string
	Reason   string
	// Arguments replace the call's arguments (updatedInput), in tiny-go's
	// shape; nil keeps them.
	Arguments jsontext.Value
	// Content, when set on a deny, is the blocked call's result instead
	// of HookBlockedContent (a permission rule said no, not a hook).
	Content string
}

// HookResult is a committed tool result as the hooks see it.
type HookResult struct {
	EntryID string
	Content string
	IsError bool
}

// HookBlockedContent is the result content of a call a hook blocked.
func HookBlockedContent(reason string) string {
	const blocked = "Error: A PreToolUse hook blocked this tool call; it was not executed."
	if reason != "" {
		return blocked + "\nReason: " + reason
	}
	return blocked
}

// NoAskContent is the result of a call a hook wanted the user to approve
// where nobody can be asked (--approval auto): it fails closed.
const NoAskContent = "Error: A PreToolUse hook asked for the user's approval of this tool call, and this session cannot ask (approval auto); it was not executed."

// preToolHooks runs the PreToolUse hooks of a call about to start: the
// started record takes any updated input, and deny (or an ask nobody can
// answer) returns the content of the blocked result.
//
// The hooks run in the call's tool phase with nothing committed, as an
// approval does: an Esc stops them and the call ends as never started
// (stopped is set, and the planner writes the aborted result).
func (a *Agent) preToolHooks(ctx context.Context, op *session.Operation, started *session.ToolStarted) (dec ToolDecision, blocked string, stopped bool, err error) {
	if a.cfg.Hooks == nil {
		return ToolDecision{}, "", false, nil
	}
	ap, pctx, ok := a.enter(ctx, session.PhaseTool, started.ToolCallID)
	if !ok {
		return ToolDecision{}, "", true, nil
	}
	call := HookCall{Key: op.Assistant.EntryID + "/" + started.ToolCallID, ToolCallID: started.ToolCallID, Tool: started.ToolName, Arguments: started.Arguments}
	dec, err = a.cfg.Hooks.BeforeTool(pctx, call)
	a.end(ap)
	switch {
	case a.abortDurable():
		return ToolDecision{}, "", true, nil
	case ctx.Err() != nil:
		return ToolDecision{}, "", true, ctx.Err() // hard stop: nothing committed
	case err != nil:
		return dec, "", false, err
	}
	if dec.Arguments != nil {
		started.Arguments = dec.Arguments
	}
	switch {
	case dec.Decision == DecisionDeny && dec.Content != "":
		return dec, dec.Content, false, nil
	case dec.Decision == DecisionDeny:
		return dec, HookBlockedContent(dec.Reason), false, nil
	case dec.Decision == DecisionAsk && a.cfg.Approve == nil:
		return dec, NoAskContent, false, nil
	}
	return dec, "", false, nil
}

// postToolHooks runs the PostToolUse (or PostToolUseFailure) hooks of a
// call whose result is committed. They run in a phase of their own, so an
// Esc stops them (the runner reports them as interrupted) and the abort
// goes on as between phases.
func (a *Agent) postToolHooks(ctx context.Context, started *session.ToolStarted, content string, isError bool) {
	if a.cfg.Hooks == nil {
		return
	}
	ap, pctx, ok := a.enter(ctx, session.PhaseModel, "")
	if !ok {
		return
	}
	defer a.end(ap)
	call := HookCall{Key: started.AssistantEntryID + "/" + started.ToolCallID, ToolCallID: started.ToolCallID, Tool: started.ToolName, Arguments: started.Arguments}
	a.cfg.Hooks.AfterTool(pctx, call, HookResult{EntryID: started.ResultEntryID, Content: content, IsError: isError})
}

// outsideHooks runs f (hooks while no operation is open: a prompt's,
// a Stop's) with a context an Abort cancels, so an Esc stops a slow hook
// instead of waiting for it. stopped reports that it did.
func (a *Agent) outsideHooks(ctx context.Context, f func(context.Context)) (stopped bool) {
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	a.mu.Lock()
	a.hookStop = cancel
	a.mu.Unlock()
	f(hctx)
	a.mu.Lock()
	a.hookStop = nil
	a.mu.Unlock()
	return hctx.Err() != nil && ctx.Err() == nil
}

// MaxStopContinuations bounds the runs Stop hooks may add after one
// prompt, so a hook that never lets go cannot loop forever.
const MaxStopContinuations = 8

// stopHooks runs the Stop hooks after a completed run; each continuation
// they ask for is an ordinary new run of the session.
func (a *Agent) stopHooks(ctx context.Context, res Result, err error) (Result, error) {
	for n := 0; a.cfg.Hooks != nil && err == nil && n < MaxStopContinuations; n++ {
		if res.Blocked != "" || res.Kind != session.OperationRun || res.Outcome != session.OutcomeCompleted {
			return res, err
		}
		var more string
		stopped := a.outsideHooks(ctx, func(hctx context.Context) { more = a.cfg.Hooks.Stopped(hctx, res.Answer, n > 0) })
		if more == "" || stopped || ctx.Err() != nil {
			return res, err
		}
		res, err = a.accept(ctx, a.cfg.NewID(), more)
	}
	return res, err
}

// hookContext is the hooks' addition to the message of entryID.
func (a *Agent) hookContext(entryID string) string {
	if a.cfg.Hooks == nil || entryID == "" {
		return ""
	}
	return a.cfg.Hooks.Context(entryID)
}
