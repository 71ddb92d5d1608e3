package acp

import (
	"context"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// The permission options tiny-go offers, as the terminal's y / a / n.
const (
	optAllowOnce    = "allow_once"
	optAllowAlways  = "allow_always"
	optRejectOnce   = "reject_once"
	optRejectAlways = "reject_always"
)

type requestKey struct{}

// withRequest wraps the approval gate so that ask knows which call it is
// asked about (the gate's prompt describes the call, not its id).
func withRequest(next agent.ApproveFunc) agent.ApproveFunc {
	if next == nil {
		return nil
	}
	return func(ctx context.Context, req agent.ApprovalRequest) (agent.Approval, error) {
		return next(context.WithValue(ctx, requestKey{}, req), req)
	}
}

// ask puts one approval question to the client as session/request_permission.
// The gate has already applied the session's "always" rules (kept beside
// the session, so a load keeps them), exactly as for the terminal prompt.
func (s *sess) ask(ctx context.Context, p approval.Prompt) (approval.Answer, error) {
	s.mu.Lock()
	mode := s.mode
	rejected := s.rejected[rejectKey(p)]
	s.mu.Unlock()
	if mode == approval.Auto {
		return approval.Answer{Choice: approval.Once}, nil
	}
	if rejected {
		return approval.Answer{Choice: approval.Deny, Reason: "The user rejects these calls for this session."}, nil
	}
	req, _ := ctx.Value(requestKey{}).(agent.ApprovalRequest)
	id, tool := req.ToolCallID, req.Tool
	// Without a request it is review mode's question about a command that
	// ran: it belongs to the call under way, already shown.
	reviewing := id == ""
	if reviewing {
		id, tool = s.runningCall(ctx), p.Tool
	}
	c := describeCall(tool, req.Display, string(req.Arguments), s.workDir())
	if !reviewing {
		// Show the call before asking about it: clients attach the
		// question to the tool call the transcript already has.
		s.update(c.start(id, acpsdk.ToolCallStatusPending))
		s.mu.Lock()
		s.announced[id] = true
		s.mu.Unlock()
	}
	s.flush()

	tc := c.toolCall(id, acpsdk.ToolCallStatusPending)
	if len(tc.Content) == 0 && len(p.Detail) > 0 {
		tc.Content = []acpsdk.ToolCallContent{acpsdk.ToolContent(acpsdk.TextBlock(clip(strings.Join(p.Detail, "\n"))))}
	}
	title := p.Action
	if p.Asker != "" {
		title = "The " + p.Asker + " asks: " + title // not the session's own agent
	}
	tc.Title = &title
	resp, err := s.srv.conn.RequestPermission(ctx, acpsdk.RequestPermissionRequest{
		SessionId: acpsdk.SessionId(s.id),
		ToolCall:  tc,
		Options:   permissionOptions(p),
	})
	if err != nil {
		if ctx.Err() != nil {
			return approval.Answer{}, context.Cause(ctx)
		}
		return approval.Answer{}, err
	}
	if resp.Outcome.Cancelled != nil || resp.Outcome.Selected == nil {
		// The client's cancel of the question is the Esc of the terminal
		// prompt: the operation is aborted, which ends ctx.
		if _, err := s.s.Agent().Abort(context.WithoutCancel(ctx)); err != nil {
			return approval.Answer{}, err
		}
		if ctx.Err() != nil {
			return approval.Answer{}, context.Cause(ctx)
		}
		return approval.Answer{}, errAborted
	}
	switch resp.Outcome.Selected.OptionId {
	case optAllowOnce:
		return approval.Answer{Choice: approval.Once}, nil
	case optAllowAlways:
		return approval.Answer{Choice: approval.Always}, nil
	case optRejectAlways:
		s.mu.Lock()
		s.rejected[rejectKey(p)] = true
		s.mu.Unlock()
		return approval.Answer{Choice: approval.Deny}, nil
	}
	return approval.Answer{Choice: approval.Deny}, nil
}

// permissionOptions are the answers offered to p, as the terminal's.
func permissionOptions(p approval.Prompt) []acpsdk.PermissionOption {
	options := []acpsdk.PermissionOption{{OptionId: optAllowOnce, Name: "Allow once", Kind: acpsdk.PermissionOptionKindAllowOnce}}
	if p.Always != "" {
		options = append(options, acpsdk.PermissionOption{OptionId: optAllowAlways, Name: "Always allow " + p.Always + " in this session", Kind: acpsdk.PermissionOptionKindAllowAlways})
	}
	return append(options,
		acpsdk.PermissionOption{OptionId: optRejectOnce, Name: "Reject", Kind: acpsdk.PermissionOptionKindRejectOnce},
		acpsdk.PermissionOption{OptionId: optRejectAlways, Name: "Always reject in this session", Kind: acpsdk.PermissionOptionKindRejectAlways},
	)
}

// rejectKey is what a "reject always" answer covers: the calls the same
// "always allow" answer would (e.g. `rm` commands), else the same action.
func rejectKey(p approval.Prompt) string {
	if p.Always != "" {
		return p.Tool + "\x00" + p.Always
	}
	return p.Tool + "\x00" + p.Action
}

// runningCall is the tool call id of the call whose tool runs with ctx.
func (s *sess) runningCall(ctx context.Context) string {
	started := tools.StartedID(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if id, ok := s.startedCalls[started]; ok {
		return id
	}
	return "review-" + started
}
