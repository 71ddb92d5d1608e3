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
		cut, err := compactionCut(st)
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
	msgs := make([]provider.Message, 0, len(st.ActiveContext)+1)
	msgs = append(msgs, provider.Message{Role: provider.RoleSystem, Content: strPtr(a.cfg.SystemPrompt)})
	for _, m := range st.ActiveContext {
		msgs = append(msgs, wireMessage(m))
	}
	return provider.Request{Model: a.cfg.Model, Messages: msgs, Tools: a.conf.wire}, nil
}

func wireMessage(m session.Message) provider.Message {
	w := provider.Message{Role: string(m.Role), Content: m.Content, ToolCallID: m.ToolCallID}
	if len(m.ToolCalls) > 0 {
		w.ToolCalls = make([]provider.ToolCall, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			w.ToolCalls[i] = provider.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments}
		}
	}
	return w
}

func strPtr(s string) *string { return &s }
