package hookwire

import (
	"context"
	"fmt"
	"time"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/hooks"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// Started runs SessionStart: source is startup, resume, clear or compact.
func (h *Hooks) Started(ctx context.Context, source string) {
	if r := h.Runner(); r != nil {
		r.SessionStarted(ctx, source)
	}
}

// Ending runs SessionEnd for a session the process leaves for another
// (/clear, /resume).
func (h *Hooks) Ending(reason string) {
	if r := h.Runner(); r != nil {
		r.SessionEnded(context.Background(), reason)
	}
}

// Ended runs SessionEnd as the process lets the session go, then closes
// the runner.
func (h *Hooks) Ended(reason string) {
	r := h.Runner()
	if r == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), hooks.DefaultTimeout)
	defer cancel()
	r.SessionEnded(ctx, reason)
	_ = r.Close()
}

// ManualCompact marks a /compact with its instructions until the
// returned function is called.
func (h *Hooks) ManualCompact(instructions string) func() {
	if h == nil {
		return func() {}
	}
	h.manual.Store(true)
	h.instructions.Store(&instructions)
	return func() {
		h.manual.Store(false)
		h.instructions.Store(nil)
	}
}

// customInstructions are the instructions of the /compact running now.
func (h *Hooks) customInstructions() string {
	if p := h.instructions.Load(); p != nil {
		return *p
	}
	return ""
}

func (h *Hooks) trigger() string {
	if h.manual.Load() {
		return "manual"
	}
	return "auto"
}

// Events is the agent event sink for hooks: PreCompact and PostCompact
// around a compaction (then SessionStart with source compact), and a
// notification when a long turn ends.
func (h *Hooks) Events() func(agent.Event) {
	return func(ev agent.Event) {
		ctx := context.Background()
		switch e := ev.(type) {
		case agent.OperationStarted:
			if e.Kind == session.OperationCompaction && h.run != nil {
				h.run.Compacting(ctx, h.trigger(), h.customInstructions(), false)
			}
		case agent.OperationCompleted:
			if e.Result.Kind == session.OperationCompaction && h.run != nil {
				h.run.Compacting(ctx, h.trigger(), h.customInstructions(), true)
				if e.Result.Outcome == session.OutcomeCompleted {
					h.run.SessionStarted(ctx, "compact")
				}
			}
			if e.Result.Kind == session.OperationRun && e.Outcome.Duration >= h.after {
				h.notify(ctx, "idle_prompt", fmt.Sprintf("tiny-go finished a turn (%s)", e.Outcome.Duration.Round(time.Second)))
			}
		}
	}
}

// notify tells the terminal and runs the Notification hooks.
func (h *Hooks) notify(ctx context.Context, kind, message string) {
	h.notifier.Notify(message)
	if h.run != nil {
		h.run.Notified(ctx, kind, message)
	}
}

// Approve runs the PermissionRequest hooks before a call's approval is
// asked: a hook that decides answers for the user.
func (h *Hooks) Approve(f agent.ApproveFunc) agent.ApproveFunc {
	r := h.Runner()
	if f == nil || r == nil || !r.Any(hooks.PermissionRequest) {
		return f
	}
	return func(ctx context.Context, req agent.ApprovalRequest) (agent.Approval, error) {
		call := agent.HookCall{ToolCallID: req.ToolCallID, Tool: req.Tool, Arguments: req.Arguments}
		if p := r.PermissionRequested(ctx, call); p.Decided {
			if !p.Allow && p.Message == "" {
				p.Message = "a PermissionRequest hook denied it"
			}
			return agent.Approval{Allow: p.Allow, Reason: p.Message}, nil
		}
		return f(ctx, req)
	}
}

// NotifyingAsk notifies before the user is asked to approve a call.
func (h *Hooks) NotifyingAsk(ask approval.AskFunc) approval.AskFunc {
	return func(ctx context.Context, p approval.Prompt) (approval.Answer, error) {
		if h != nil {
			h.notify(ctx, "permission_prompt", "tiny-go needs your permission to use "+p.Tool)
		}
		return ask(ctx, p)
	}
}

// ClaudePermissionMode is Claude Code's name of an approval mode.
func ClaudePermissionMode(m approval.Mode) string {
	switch m {
	case approval.Auto:
		return "bypassPermissions"
	case approval.Edits:
		return "acceptEdits"
	case approval.Plan:
		return "plan"
	}
	return "default"
}
