package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/session"
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

// beginToolPhase opens the tool phase of a call that starts now. Without
// an approval hook (or for a replay) that is committing the intent. With
// one, the phase opens first with nothing committed, so an Esc while the
// user decides is an abort of this call in phase tool and the call ends as
// never started ("aborted"); an allowed call then commits its intent within
// the same phase, and a denied one commits the intent together with an
// error result saying so, and no effect runs. A crash while waiting leaves
// nothing behind: the planner starts the same call again and the user is
// asked again.
//
// ok is false when there is nothing left to run: the abort won, or the call
// was denied and settled. Otherwise ap is the active tool phase, to be
// ended with endPhase once the effect is over.
func (a *Agent) beginToolPhase(ctx context.Context, req *ApprovalRequest, started *session.ToolStarted, intent []session.Fact, evs ...Event) (ap *activePhase, pctx context.Context, ok bool, err error) {
	ap, pctx = newPhase(ctx, session.PhaseTool, started.ToolCallID)
	if req == nil || a.cfg.Approve == nil {
		aborted, err := a.commit(ctx, commitReq{facts: intent, events: evs, phase: ap})
		if err != nil || aborted {
			ap.cancel()
			return nil, nil, false, err
		}
		return ap, pctx, true, nil
	}
	if aborted, err := a.commit(ctx, commitReq{phase: ap}); err != nil || aborted {
		ap.cancel()
		return nil, nil, false, err
	}
	ans, aerr := a.cfg.Approve(pctx, *req)
	switch {
	case a.abortDurable():
		a.endPhase(ap)
		return nil, nil, false, nil // the planner writes the aborted result
	case ctx.Err() != nil:
		a.endPhase(ap)
		return nil, nil, false, ctx.Err() // hard stop: nothing committed
	case aerr != nil:
		a.endPhase(ap)
		return nil, nil, false, fmt.Errorf("approval of %s: %w", req.Display, aerr)
	case !ans.Allow:
		a.endPhase(ap)
		return nil, nil, false, a.commitDenial(ctx, started, intent, DeniedContent(ans.Reason), evs...)
	}
	if ans.Arguments != nil {
		if !ans.Arguments.IsValid() || ans.Arguments.Kind() != '{' {
			a.endPhase(ap)
			return nil, nil, false, fmt.Errorf("approval of %s: the updated arguments are not a JSON object", req.Display)
		}
		started.Arguments = ans.Arguments
	}
	// The phase opened above stays active while the intent commits.
	if aborted, err := a.commit(ctx, commitReq{facts: intent, events: evs}); err != nil || aborted {
		a.endPhase(ap)
		return nil, nil, false, err
	}
	return ap, pctx, true, nil
}

// commitDenial settles a denied call in one transaction: its intent and an
// error result that tells the model the user (or a hook) said no. The projections see a
// tool that failed at once.
func (a *Agent) commitDenial(ctx context.Context, started *session.ToolStarted, intent []session.Fact, content string, evs ...Event) error {
	facts := append(intent[:len(intent):len(intent)], session.Fact{ID: started.ResultEntryID, Entry: &session.ToolResultEntry{
		StepID: started.StepID, ToolCallID: started.ToolCallID, Content: content,
		ToolName: started.ToolName, ToolStartedID: intent[0].ID, Result: session.ResultError,
	}})
	for _, ev := range evs {
		if s, ok := ev.(ToolStarted); ok {
			evs = append(evs, ToolCompleted{Tool: s.Tool, Outcome: ToolOutcome{Outcome: "failed", Content: content}})
			break
		}
	}
	if _, err := a.commit(ctx, commitReq{facts: facts, events: evs, settles: true}); err != nil {
		return fmt.Errorf("commit denied tool call: %w", err)
	}
	return nil
}
