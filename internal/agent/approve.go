package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// ApprovalRequest is a tool call that waits for the user's decision before
// anything about it is committed.
type ApprovalRequest struct {
	OperationID string
	ToolCallID  string
	Tool        string // model-facing name
	Display     string // human name ("mcp:alias/tool" for MCP tools)
	// Builtin is false for tools of MCP servers.
	Builtin bool
	// Arguments is the parsed argument object the call would run with.
	Arguments jsontext.Value
	// Recovery is set when an earlier process asked and died waiting.
	Recovery bool
	// Asked is set when a hook or a permission rule asked for the user's
	// approval: the user is asked even about a read, and an earlier
	// "always" answer does not cover it.
	Asked bool
}

// Approval is the user's decision on one call.
type Approval struct {
	Allow bool
	// Reason is the user's optional explanation of a denial; the model
	// sees it in the call's result.
	Reason string
	// Arguments, when set on an allowed call, replace the model's: the
	// call runs with them, and toolStarted records them (the Claude Agent
	// SDK's updatedInput). They must be a JSON object.
	Arguments jsontext.Value
}

// ApproveFunc decides a call. It may block until the user answers; ctx
// ends when the operation is aborted (the wait is the tool phase) or the
// process stops, and then the answer is ignored. An error stops the run
// with nothing committed for the call, so the next resume asks again.
type ApproveFunc func(ctx context.Context, req ApprovalRequest) (Approval, error)

// DeniedContent is the result content of a call the user denied.
func DeniedContent(reason string) string {
	const denied = "Error: The user denied this tool call; it was not executed."
	if reason = strings.TrimSpace(reason); reason != "" {
		return denied + "\nReason given by the user: " + reason
	}
	return denied
}

// approvalRequest is what the user is asked about a call that starts now,
// or nil when nobody is asked: no approval hook, a hook allowed it, or the
// tool is safe to run and no hook asked.
func (a *Agent) approvalRequest(c *toolCall, dec ToolDecision) *ApprovalRequest {
	if a.cfg.Approve == nil || dec.Decision == DecisionAllow || (c.started.Replay == tools.ReplaySafe && dec.Decision != DecisionAsk) {
		return nil
	}
	return &ApprovalRequest{OperationID: c.started.OperationID, ToolCallID: c.started.ToolCallID, Tool: c.started.ToolName, Display: c.info.Display,
		Builtin: c.tool.Definition().DefinitionIdentity == "", Arguments: c.started.Arguments, Recovery: c.info.Recovery,
		Asked: dec.Decision == DecisionAsk}
}

// approve asks the user about a call in its tool phase, with nothing
// committed yet: an Esc while the user decides is an abort of this call in
// phase tool, and the call ends as never started ("aborted"). A crash
// while waiting leaves nothing behind: the planner starts the same call
// again and the user is asked again.
//
// An allowed call returns its tool phase still open: its intent commits
// within it (with any arguments the user changed) and its effect runs in
// it. done is set when there is nothing left to run: the abort won, or the
// call was denied (then settled with an error result saying so).
func (a *Agent) approve(ctx context.Context, c *toolCall, req ApprovalRequest) (ap *activePhase, pctx context.Context, done bool, err error) {
	ap, pctx, ok := a.enter(ctx, session.PhaseTool, c.started.ToolCallID)
	if !ok {
		return nil, nil, true, nil // the planner writes the aborted result
	}
	ans, aerr := a.cfg.Approve(pctx, req)
	switch {
	case a.abortDurable():
		// the planner writes the aborted result
	case ctx.Err() != nil:
		err = ctx.Err() // hard stop: nothing committed
	case aerr != nil:
		err = fmt.Errorf("approval of %s: %w", req.Display, aerr)
	case !ans.Allow:
		a.end(ap)
		return nil, nil, true, a.commitDenial(ctx, c, DeniedContent(ans.Reason))
	case ans.Arguments != nil && (!ans.Arguments.IsValid() || ans.Arguments.Kind() != '{'):
		err = fmt.Errorf("approval of %s: the updated arguments are not a JSON object", req.Display)
	default:
		if ans.Arguments != nil {
			c.started.Arguments = ans.Arguments
		}
		return ap, pctx, false, nil
	}
	a.end(ap)
	return nil, nil, true, err
}

// commitDenial settles a denied call in one transaction: its intent and an
// error result that tells the model the user (or a hook) said no. The
// projections see a tool that failed at once.
func (a *Agent) commitDenial(ctx context.Context, c *toolCall, content string) error {
	facts := append(c.intent(), session.Fact{ID: c.started.ResultEntryID, Entry: &session.ToolResultEntry{
		StepID: c.started.StepID, ToolCallID: c.started.ToolCallID, Content: content,
		ToolName: c.started.ToolName, ToolStartedID: c.id, Result: session.ResultError,
	}})
	evs := append(c.events(), ToolCompleted{Tool: c.info, Outcome: ToolOutcome{Outcome: "failed", Content: content}})
	if _, err := a.settle(ctx, facts, evs...); err != nil {
		return fmt.Errorf("commit denied tool call: %w", err)
	}
	return nil
}
