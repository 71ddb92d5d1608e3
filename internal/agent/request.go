package agent

import (
	"context"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/recovery"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// SummarySystemPrompt is the exact system prompt of a compaction request
// (runtime.md §4).
const SummarySystemPrompt = "Summarize this coding session compactly. Preserve decisions, changed files, errors, and next steps."

// CompactedHistoryPrefix starts the user message that stands for compacted
// history in the active context.
const CompactedHistoryPrefix = "[Compacted history]\n"

// wireCache keeps the wire form of the active context between steps, so
// a step converts only the messages appended since the last one.
//
// The reducer's active context is append-only between compactions and it
// never changes a committed element in place; a compaction (or a grown
// backing array) shows as a different first element, and then everything
// is converted again. Only the goroutine driving the operation uses it.
type wireCache struct {
	base *session.Message // &active[0] when msgs was built
	n    int              // active messages converted
	msgs []provider.Message
	// extra is what hooks added at an entry (recorded before the next
	// request, never changed), sent after its content; nil adds nothing.
	extra func(entryID string) string
}

// messages returns the system message followed by the active context,
// each assistant message with the reasoning details recorded for its entry
// (ids are aligned with active). Details are recorded before their entry
// commits and never change, so a cached message stays right; messages a
// compaction summarized are no longer active, so theirs are not sent. The
// result is capped, so nobody can append into the cache's array.
func (c *wireCache) messages(systemPrompt string, active []session.Message, ids []string, details func(string) jsontext.Value, images func(string) []provider.Image) []provider.Message {
	if len(active) == 0 || c.base != &active[0] || len(active) < c.n || len(c.msgs) == 0 || *c.msgs[0].Content != systemPrompt {
		c.msgs = append(c.msgs[:0:0], provider.Message{Role: provider.RoleSystem, Content: &systemPrompt})
		c.n = 0
	}
	for i, m := range active[c.n:] {
		w := wireMessage(m)
		if j := c.n + i; m.Role == session.RoleAssistant && j < len(ids) && ids[j] != "" {
			w.ReasoningDetails = details(ids[j])
		}
		if m.Role == session.RoleUser && m.Content != nil && images != nil {
			w.Images = images(*m.Content)
		}
		if j := c.n + i; c.extra != nil && m.Content != nil && m.Role != session.RoleAssistant && j < len(ids) {
			if more := c.extra(ids[j]); more != "" {
				w.Content = strPtr(*m.Content + "\n\n" + more)
			}
		}
		c.msgs = append(c.msgs, w)
	}
	c.n = len(active)
	if len(active) > 0 {
		c.base = &active[0]
	}
	return c.msgs[:len(c.msgs):len(c.msgs)]
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

// assistantRequest is the physical request of a run's step: the system
// prompt, the active context and the offered tools.
func (a *Agent) assistantRequest(st *session.State) provider.Request {
	if a.cfg.Hooks != nil {
		a.wire.extra = a.hookContext
	}
	msgs := a.wire.messages(a.cfg.SystemPrompt, st.ActiveContext, st.ActiveEntryIDs, a.cfg.Reasoning.Details, a.cfg.Images)
	return provider.Request{Model: a.cfg.Model, Messages: msgs, Tools: a.conf.wire}
}

// stream commits the stepAttempt of a planned step, performs its request
// and streams the reply to the observer. It returns nil when nothing is left to settle here: an abort is durable
// (the planner closes the attempt), or this process is stopping (err is
// ctx.Err(); the attempt stays open for the next resume).
func (a *Agent) stream(ctx context.Context, r *run, op *session.Operation, p recovery.StartStep, req provider.Request) (*sent, error) {
	stepID := p.StepID
	if stepID == "" {
		stepID = a.cfg.NewID()
	}
	rec := &session.StepAttempt{
		OperationID:           op.OperationID,
		StepID:                stepID,
		AttemptID:             a.cfg.NewID(),
		StepKind:              p.StepKind,
		Attempt:               p.Attempt,
		ContextThroughEntryID: p.ContextThroughEntryID,
		ConfigurationSnapshot: a.conf.snapshot,
		ConfigurationDigest:   a.conf.digest,
	}
	phase := session.PhaseModel
	if p.StepKind == session.StepCompaction {
		phase = session.PhaseCompact
	}
	info := ModelInfo{OperationID: op.OperationID, Kind: op.Kind, StepID: stepID, AttemptID: rec.AttemptID, Attempt: p.Attempt, Recovery: r.recovery}
	if aborted, err := a.commit(ctx, []session.Fact{{Record: rec}}, ModelStarted{Model: info}); err != nil || aborted {
		if err != nil {
			return nil, fmt.Errorf("commit step attempt: %w", err)
		}
		return nil, nil // an abort is durable; the planner reconciles it
	}
	r.ownAttempts[rec.AttemptID] = info
	ap, pctx, ok := a.enter(ctx, phase, "")
	if !ok {
		return nil, nil // the planner closes the attempt (aborted)
	}
	started := a.cfg.Now()
	onDelta := func(d provider.Delta) {
		switch {
		case d.Retry != nil:
			a.emit(ModelRetrying{Model: info, Wait: *d.Retry})
		case p.StepKind != session.StepAssistant:
			// A summary is not shown as it streams.
		case d.Reasoning != "":
			a.emit(ModelReasoningDelta{Text: d.Reasoning})
		case d.Content != "":
			a.emit(ModelDelta{Text: d.Content})
		}
	}
	resp, err := a.cfg.Provider.Stream(pctx, req, onDelta)
	a.end(ap)
	s := &sent{info: info, dur: a.cfg.Now().Sub(started), resp: resp, err: err}
	if err != nil {
		if a.abortDurable() {
			return nil, nil // closeAttempt(aborted) comes from the planner
		}
		if ctx.Err() != nil {
			// Hard stop of this process without an abort: leave the attempt
			// open; the next resume decides (retry once).
			return nil, ctx.Err()
		}
	}
	return s, nil
}
