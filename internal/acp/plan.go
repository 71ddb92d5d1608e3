package acp

import (
	acpsdk "github.com/coder/acp-go-sdk"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/todo"
)

// The model's todo list reaches the editor as ACP `plan` updates: the
// whole list each time a todo_write call succeeds, and the session's list
// when it is loaded.

// planFromCall is the plan a completed todo_write call set.
func planFromCall(e agent.ToolCompleted) (todo.List, bool) {
	if e.Tool.Tool != todo.ToolName || e.Outcome.Outcome != "succeeded" {
		return nil, false
	}
	l, err := todo.Parse([]byte(e.Tool.Arguments))
	return l, err == nil
}

// plan sends l as the session's plan.
func (s *sess) plan(l todo.List) {
	entries := make([]acpsdk.PlanEntry, 0, len(l))
	for _, it := range l {
		entries = append(entries, acpsdk.PlanEntry{
			Content:  it.Content,
			Priority: acpsdk.PlanEntryPriorityMedium,
			Status:   acpsdk.PlanEntryStatus(it.Status),
		})
	}
	s.update(acpsdk.SessionUpdate{Plan: &acpsdk.SessionUpdatePlan{Entries: entries, SessionUpdate: "plan"}})
}
