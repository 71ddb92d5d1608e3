package headless

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/cctools"
)

type callKey struct{}

// callSlot carries one approval request to Ask, and Ask's updated
// arguments back.
type callSlot struct {
	req  agent.ApprovalRequest
	args jsontext.Value
}

// Approve wraps the session's approval gate: the gate decides which calls
// need a decision (reads never do, "always" answers are remembered) and
// asks Ask about the others; an allow with updated input runs the call
// with it.
func (d *Driver) Approve(next agent.ApproveFunc) agent.ApproveFunc {
	if next == nil {
		return nil
	}
	return func(ctx context.Context, req agent.ApprovalRequest) (agent.Approval, error) {
		slot := &callSlot{req: req}
		ap, err := next(context.WithValue(ctx, callKey{}, slot), req)
		if err == nil && ap.Allow && slot.args != nil {
			ap.Arguments = slot.args
		}
		return ap, err
	}
}

// errNoAnswer is a question the SDK can no longer answer.
var errNoAnswer = errors.New("the input ended while tiny-go waited for the SDK's answer (a permission, a hook callback or an SDK MCP tool); the call was not run (resume the session to be asked again)")

// Ask decides a call the gate asks about, by the permission mode and
// rules, or by asking the SDK (can_use_tool).
func (d *Driver) Ask(ctx context.Context, p approval.Prompt) (approval.Answer, error) {
	slot, _ := ctx.Value(callKey{}).(*callSlot)
	if slot == nil {
		return approval.Answer{Choice: approval.Deny, Reason: "tiny-go could not identify the call"}, nil
	}
	call := cctools.ToClaude(slot.req.Tool, slot.req.Arguments, d.s.WorkDir())
	d.mu.Lock()
	mode := d.mode
	d.mu.Unlock()
	edits := mode == ModeAcceptEdits && approval.EditsInside(slot.req, d.s.WorkDir())
	dec, why := decide(mode, d.opt.Rules, d.opt.PromptTool, call, edits)
	switch dec {
	case allow:
		return approval.Answer{Choice: approval.Once}, nil
	case deny:
		d.denied(slot.req.ToolCallID, call)
		d.emitDenied(slot.req.ToolCallID, call, why)
		return approval.Answer{Choice: approval.Deny, Reason: why}, nil
	}
	resp, err := d.canUseTool(ctx, slot.req.ToolCallID, call, p)
	if err != nil {
		return approval.Answer{}, err
	}
	return d.answer(ctx, slot, call, resp)
}

// canUseTool asks the SDK and waits for its answer, or for the run's end.
func (d *Driver) canUseTool(ctx context.Context, toolUseID string, call cctools.Call, p approval.Prompt) (*ControlResponse, error) {
	input := json.RawMessage(call.Input)
	if !json.Valid(input) {
		input = json.RawMessage("{}")
	}
	return d.request(ctx, map[string]any{
		"subtype": "can_use_tool", "tool_name": call.Name, "input": input, "tool_use_id": toolUseID,
		"permission_suggestions": []any{}, "description": p.Action,
	})
}

// request sends the SDK a control request and waits for its answer; a
// request the run's end or the input's end leaves unanswered is
// withdrawn.
func (d *Driver) request(ctx context.Context, body map[string]any) (*ControlResponse, error) {
	ch := make(chan *ControlResponse, 1)
	d.mu.Lock()
	d.nextID++
	id := fmt.Sprintf("tiny-go-%d", d.nextID)
	d.pending[id] = ch
	d.mu.Unlock()
	d.out.json(outRequest{Type: controlRequest, RequestID: id, Request: body})
	select {
	case r := <-ch:
		return r, nil
	case <-ctx.Done():
		d.withdraw(id)
		return nil, context.Cause(ctx)
	case <-d.inputDone:
		d.withdraw(id)
		return nil, errNoAnswer
	}
}

func (d *Driver) withdraw(id string) {
	d.mu.Lock()
	delete(d.pending, id)
	d.mu.Unlock()
	d.out.json(map[string]string{"type": controlCancelReq, "request_id": id})
}

// answer turns the SDK's PermissionResult into the gate's answer.
func (d *Driver) answer(ctx context.Context, slot *callSlot, call cctools.Call, r *ControlResponse) (approval.Answer, error) {
	if !r.OK {
		d.denied(slot.req.ToolCallID, call)
		return approval.Answer{Choice: approval.Deny, Reason: "The permission check failed: " + r.Error}, nil
	}
	var res struct {
		Behavior     string          `json:"behavior"`
		UpdatedInput json.RawMessage `json:"updatedInput"`
		Message      string          `json:"message"`
		Interrupt    bool            `json:"interrupt"`
	}
	if err := json.Unmarshal(r.Body, &res); err != nil {
		return approval.Answer{}, fmt.Errorf("can_use_tool answer: %w", err)
	}
	switch res.Behavior {
	case "allow":
		args, err := updatedArgs(slot.req, call, res.UpdatedInput)
		if err != nil {
			d.denied(slot.req.ToolCallID, call)
			return approval.Answer{Choice: approval.Deny, Reason: err.Error()}, nil
		}
		slot.args = args
		return approval.Answer{Choice: approval.Once}, nil
	case "deny":
		d.denied(slot.req.ToolCallID, call)
		if res.Interrupt {
			go d.abortRun(context.WithoutCancel(ctx))
		}
		return approval.Answer{Choice: approval.Deny, Reason: res.Message}, nil
	}
	return approval.Answer{}, fmt.Errorf("can_use_tool answer: behavior must be allow or deny, not %q", res.Behavior)
}

// updatedArgs maps an updatedInput in Claude Code's shape back to the
// call's tiny-go arguments; nil when there is none or it changes nothing.
func updatedArgs(req agent.ApprovalRequest, call cctools.Call, in json.RawMessage) (jsontext.Value, error) {
	if len(bytes.TrimSpace(in)) == 0 || bytes.Equal(bytes.TrimSpace(in), []byte("null")) || jsonEqual(in, call.Input) {
		return nil, nil
	}
	tool, args, err := cctools.TinyCall(cctools.Call{Name: call.Name, Input: jsontext.Value(in)})
	if err != nil {
		return nil, fmt.Errorf("the updated input cannot be used: %v", err)
	}
	if tool != req.Tool {
		return nil, fmt.Errorf("the updated input would make this %s call a %s call, which tiny-go cannot do", req.Tool, tool)
	}
	return args, nil
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// denied records a denial for the result's permission_denials.
func (d *Driver) denied(toolUseID string, call cctools.Call) {
	d.tmu.Lock()
	defer d.tmu.Unlock()
	if d.turn == nil {
		return
	}
	in := json.RawMessage(call.Input)
	if !json.Valid(in) {
		in = json.RawMessage("{}")
	}
	d.turn.denials = append(d.turn.denials, permissionDenial{ToolName: call.Name, ToolUseID: toolUseID, ToolInput: in})
}

// emitDenied writes Claude Code's system/permission_denied for a call the
// mode or a rule denied without asking the SDK.
func (d *Driver) emitDenied(toolUseID string, call cctools.Call, why string) {
	kind := "mode"
	if anyMatch(d.opt.Rules.Deny, call) {
		kind = "rule"
	}
	d.emit(map[string]any{
		"type": "system", "subtype": "permission_denied", "tool_name": call.Name, "tool_use_id": toolUseID,
		"decision_reason_type": kind, "decision_reason": why, "message": why,
		"uuid": newUUID(), "session_id": d.s.ID(),
	})
}
