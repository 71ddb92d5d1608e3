package agent

import (
	"fmt"

	"github.com/go-json-experiment/json"

	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// SummarySystemPrompt is the exact system prompt of a compaction request
// (runtime.md §4).
const SummarySystemPrompt = "Summarize this coding session compactly. Preserve decisions, changed files, errors, and next steps."

// CompactedHistoryPrefix starts the user message that stands for compacted
// history in the active context.
const CompactedHistoryPrefix = "[Compacted history]\n"

// request builds the physical request of a step from the durable state.
func (a *Agent) request(st *session.State, kind session.StepKind) (provider.Request, error) {
	if kind == session.StepCompaction {
		cut, err := operationCut(st)
		if err != nil {
			return provider.Request{}, err
		}
		body, err := json.Marshal(st.ActiveContext[:cut.index], json.Deterministic(true))
		if err != nil {
			return provider.Request{}, fmt.Errorf("encode summary input: %w", err)
		}
		user := string(body)
		return provider.Request{
			Model: a.cfg.Model,
			Messages: []provider.Message{
				{Role: provider.RoleSystem, Content: strPtr(SummarySystemPrompt)},
				{Role: provider.RoleUser, Content: &user},
			},
		}, nil
	}
	return provider.Request{Model: a.cfg.Model, Messages: wireMessages(a.cfg.SystemPrompt, st.ActiveContext), Tools: a.conf.wire}, nil
}

// wireMessages converts the active context after the system prompt. It
// runs on every step over the whole context, so the tool calls of all
// messages share one allocation.
func wireMessages(systemPrompt string, active []session.Message) []provider.Message {
	n := 0
	for _, m := range active {
		n += len(m.ToolCalls)
	}
	calls := make([]provider.ToolCall, 0, n)
	msgs := make([]provider.Message, 0, len(active)+1)
	msgs = append(msgs, provider.Message{Role: provider.RoleSystem, Content: &systemPrompt})
	for _, m := range active {
		w := provider.Message{Role: string(m.Role), Content: m.Content, ToolCallID: m.ToolCallID}
		if len(m.ToolCalls) > 0 {
			start := len(calls)
			for _, c := range m.ToolCalls {
				calls = append(calls, provider.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
			}
			w.ToolCalls = calls[start:len(calls):len(calls)]
		}
		msgs = append(msgs, w)
	}
	return msgs
}

func strPtr(s string) *string { return &s }
