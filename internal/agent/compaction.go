package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/go-json-experiment/json"

	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/recovery"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// The compaction executor: /compact, compaction before a run, and the chain
// of runtime.md §4 inside a run (the run ends context_limit, a compaction
// runs, a continuation run goes on).

// keepMessages is the minimum number of active-context messages a
// compaction retains (runtime.md §4).
const keepMessages = 6

// ContinuePrompt is the user entry of the run that goes on after an
// in-run compaction (runtime.md §4).
const ContinuePrompt = "Continue the task. The work so far is summarized above."

// contextLimitMessage is the error of a run that ended for a compaction.
const contextLimitMessage = "context window full; continuing after compaction"

// cut is where a compaction splits the active context, and the durable
// source partition that coincides with it: every message entry of the
// session, the ones earlier compactions summarized included, split at the
// same message (runtime.md §4).
type cut struct {
	index        int      // ActiveContext[:index] is summarized
	compacted    []string // source entry ids before the cut
	retained     []string // source entry ids from the cut on
	inputThrough string   // the last source entry id
	// tail holds the retained messages with their source entry ids (the
	// compaction entry repeats them).
	tail []session.RetainedMessage
}

// compactionCut computes the cut on the current active context: keep at
// least the last keepMessages messages, then move earlier until the first
// retained message is a user message, so no turn is split. Inside a run
// (toolRounds) the cut may also fall at an assistant message whose calls
// are all answered in the retained tail, which keeps at least the last
// complete tool round. It is a pure function of the state.
func compactionCut(st *session.State, toolRounds bool) (cut, error) {
	ctx, ids := st.ActiveContext, st.ActiveEntryIDs
	hids := st.TranscriptEntryIDs
	if len(ids) != len(ctx) {
		return cut{}, fmt.Errorf("active context has %d messages but %d source ids", len(ctx), len(ids))
	}
	first := 0 // the first active message that is a source entry
	if len(ids) > 0 && ids[0] == "" {
		first = 1 // the prior summary
	}
	// The active source entries are the tail of the history.
	off := len(hids) - (len(ids) - first)
	if off < 0 || !slices.Equal(hids[off:], ids[first:]) {
		return cut{}, fmt.Errorf("the active context is not the tail of the session's message entries")
	}
	for k := len(ctx) - keepMessages; k > first; k-- {
		if !cutsAt(ctx, k, toolRounds) {
			continue
		}
		at := off + k - first // the history index of ctx[k]
		c := cut{index: k, compacted: hids[:at:at], retained: hids[at:], inputThrough: hids[len(hids)-1]}
		c.tail = retainedTail(ctx[k:], ids[k:])
		return c, nil
	}
	return cut{}, ErrNothingToCompact
}

// cutsAt reports whether the retained tail may start at ctx[k].
func cutsAt(ctx []session.Message, k int, toolRounds bool) bool {
	switch m := ctx[k]; {
	case m.Role == session.RoleUser:
		return true
	case !toolRounds || m.Role != session.RoleAssistant:
		return false
	default:
		answered := 0
		for _, t := range ctx[k+1:] {
			if t.Role != session.RoleTool {
				break
			}
			if slices.ContainsFunc(m.ToolCalls, func(c session.ToolCall) bool { return c.ID == t.ToolCallID }) {
				answered++
			}
		}
		return answered == len(m.ToolCalls)
	}
}

// operationCut is the cut of the open compaction as its compactionStarted
// recorded it: a resumed compaction summarizes the active context before
// the first retained entry, whoever started it and whatever cut rule they
// used. The reducer checked that the record partitions the whole history.
func operationCut(st *session.State) (cut, error) {
	rec := st.Operation.Compaction
	if rec == nil {
		return cut{}, fmt.Errorf("compaction %s has no compactionStarted in the state", st.Operation.OperationID)
	}
	c := cut{index: len(st.ActiveContext), compacted: rec.CompactedEntryIDs, retained: rec.RetainedEntryIDs, inputThrough: rec.InputThroughEntryID}
	if len(rec.RetainedEntryIDs) > 0 {
		i := slices.Index(st.ActiveEntryIDs, rec.RetainedEntryIDs[0])
		if i < 0 {
			return cut{}, fmt.Errorf("compaction %s retains %s, which is not in the active context", rec.OperationID, rec.RetainedEntryIDs[0])
		}
		c.index = i
	}
	// Only the retained messages are needed (the compaction entry repeats
	// them); they are the tail of the history and of the active context.
	n := len(rec.RetainedEntryIDs)
	if n != len(st.ActiveContext)-c.index || !slices.Equal(st.ActiveEntryIDs[c.index:], rec.RetainedEntryIDs) {
		return cut{}, fmt.Errorf("compaction %s retains entries that are not the tail of the session", rec.OperationID)
	}
	c.tail = retainedTail(st.ActiveContext[c.index:], rec.RetainedEntryIDs)
	return c, nil
}

// retainedTail pairs messages with their source entry ids, in a new slice
// (the entry keeps it).
func retainedTail(msgs []session.Message, ids []string) []session.RetainedMessage {
	tail := make([]session.RetainedMessage, len(msgs))
	for i := range msgs {
		tail[i] = session.RetainedMessage{SourceEntryID: ids[i], Message: msgs[i]}
	}
	return tail
}

// startRecord is the compactionStarted of a new compaction at c, the cut
// of st. Its sourceDigest covers the whole history; it comes from the
// reducer's running hash, so only what is new since the last compaction
// is hashed, not the session.
func (a *Agent) startRecord(st *session.State, c cut) *session.CompactionStarted {
	return &session.CompactionStarted{
		OperationID:         a.cfg.NewID(),
		InputThroughEntryID: c.inputThrough,
		ResultEntryID:       a.cfg.NewID(),
		CompactedEntryIDs:   c.compacted,
		RetainedEntryIDs:    nonNil(c.retained),
		SourceDigest:        st.HistoryDigest(),
	}
}

// Compact runs /compact as its own durable operation on an idle session.
// It returns ErrNothingToCompact, writing nothing, when no user boundary
// exists.
func (a *Agent) Compact(ctx context.Context) (Result, CompactStats, error) {
	if !a.busy.CompareAndSwap(false, true) {
		return Result{}, CompactStats{}, ErrBusy
	}
	defer a.busy.Store(false)
	a.beginTask()
	return a.compact(ctx)
}

func (a *Agent) compact(ctx context.Context) (Result, CompactStats, error) {
	if res, err := a.settleOpen(ctx); err != nil || res != nil {
		return derefResult(res), CompactStats{}, err
	}
	st := a.cfg.Log.State()
	c, err := compactionCut(st, false)
	if err != nil {
		return Result{}, CompactStats{}, err
	}
	stats := CompactStats{Compacted: c.index, Kept: len(st.ActiveContext) - c.index}
	rec := a.startRecord(st, c)
	started := OperationStarted{OperationID: rec.OperationID, Kind: session.OperationCompaction}
	if _, err := a.commit(ctx, []session.Fact{{Record: rec}}, started); err != nil {
		return Result{}, CompactStats{}, fmt.Errorf("start compaction: %w", err)
	}
	res, err := a.drive(ctx, false)
	return res, stats, err
}

// CompactStats describes a compaction for the user:
// "Compacted N messages (kept last M)."
type CompactStats struct {
	Compacted int
	Kept      int
}

// compactionStep is the step executor of a compaction, in the phases of
// assistantStep: the summary request (summaryRequest), streamed (stream),
// settled by the compaction entry with its usage in one transaction
// (summarySettlement, then commitSettlement).
func (a *Agent) compactionStep(ctx context.Context, r *run, st *session.State, p recovery.StartStep) (*Result, error) {
	op := st.Operation
	c, err := operationCut(st)
	if err != nil {
		return nil, err
	}
	req, err := a.summaryRequest(ctx, st.ActiveContext[:c.index])
	if err != nil {
		return nil, err
	}
	s, err := a.stream(ctx, r, op, p, req)
	if s == nil {
		return nil, err
	}
	return a.commitSettlement(ctx, r, s, summarySettlement(op, c, p.StepKind, s))
}

// summarySettlement decides what settles a summary attempt: a failed
// request, or a reply that is not a complete text answer, fails the step;
// otherwise its usage and the compaction entry settle it.
func summarySettlement(op *session.Operation, c cut, kind session.StepKind, s *sent) settlement {
	if s.err != nil {
		return stepFailure(s, failureReason(s.err), errorType(s.err))
	}
	if reason := invalidReply(s.resp, kind); reason != "" {
		return stepFailure(s, reason, "invalid_response")
	}
	usage := sessionUsage(s.resp.Usage)
	entry := compactionEntry(op, c, *s.resp.Content)
	facts := []session.Fact{
		{Usage: &session.UsageFact{OperationID: op.OperationID, AttemptID: s.info.AttemptID, Usage: usage}},
		{ID: op.ResultEntryID, Entry: entry},
	}
	completed := ModelOutcome{Outcome: "succeeded", Duration: s.dur, Usage: &usage, PromptTokens: s.resp.Usage.PromptTokens}
	return settlement{facts: facts, outcome: completed}
}

// summaryRequest is the request of runtime.md §4: no tools, the summary
// system prompt, and the summarized messages as a JSON array, trimmed so
// that the request fits the context window.
func (a *Agent) summaryRequest(ctx context.Context, msgs []session.Message) (provider.Request, error) {
	msgs = trimSummaryInput(msgs, summaryBudget(a.contextWindow(ctx)))
	body, err := json.Marshal(msgs, json.Deterministic(true))
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

// compactionEntry builds the entry that settles a compaction step.
func compactionEntry(op *session.Operation, c cut, summary string) *session.CompactionEntry {
	return &session.CompactionEntry{
		OperationID:             op.OperationID,
		Summary:                 summary,
		CompactedThroughEntryID: c.compacted[len(c.compacted)-1],
		RetainedTail:            c.tail,
	}
}

// maybeAutoCompact compacts before a run when the last request's prompt
// exceeded the configured share of the context window. A session with no
// user boundary is left as it is (no loop) and a failed summary does not
// stop the run; an aborted one does (the user pressed Esc), and its result
// is returned so the prompt is not accepted.
func (a *Agent) maybeAutoCompact(ctx context.Context) (*Result, error) {
	if !a.overShare(ctx, a.lastPromptTokens) {
		return nil, nil
	}
	a.lastPromptTokens = 0 // decide once per oversized request
	res, _, err := a.compact(ctx)
	switch {
	case errors.Is(err, ErrNothingToCompact):
		return nil, nil
	case err != nil:
		return nil, err
	case res.Outcome == session.OutcomeAborted:
		return &res, nil
	}
	return nil, nil
}

// compactBetweenSteps ends the run for a compaction when the next step of
// a run is due (every call of the last assistant entry answered) and the
// last request exceeded the share of the window. handled is false when
// the run simply goes on.
func (a *Agent) compactBetweenSteps(ctx context.Context, r *run, st *session.State, p recovery.StartStep) (res *Result, handled bool, err error) {
	op := st.Operation
	if op.Kind != session.OperationRun || p.StepKind != session.StepAssistant || p.Attempt != 1 || op.Assistant == nil {
		return nil, false, nil
	}
	if !a.overShare(ctx, a.lastPromptTokens) {
		return nil, false, nil
	}
	return a.endForCompaction(ctx, r, st, nil)
}

// endForCompaction ends the run with context_limit and starts the chain's
// compaction in the same transaction, so no process ever sees the one
// without the other. failed is the rejected request when the provider
// said the prompt is too long (its attempt is closed by the same
// transaction). handled is false, and nothing is written, when there is
// nothing to compact, or when the continuation run's own first request
// overflowed (compacting again cannot help): the caller fails as usual.
func (a *Agent) endForCompaction(ctx context.Context, r *run, st *session.State, failed *sent) (res *Result, handled bool, err error) {
	op := st.Operation
	if a.cfg.AutoCompact == nil || op.Kind != session.OperationRun {
		return nil, false, nil
	}
	if op.Assistant == nil && len(st.ActiveContext) > 0 {
		if m := st.ActiveContext[len(st.ActiveContext)-1]; m.Content != nil && *m.Content == ContinuePrompt {
			return nil, false, nil
		}
	}
	c, err := compactionCut(st, true)
	if err != nil {
		return nil, false, nil
	}
	e := session.ErrorInfo{Code: session.CodeContextLimit, Message: contextLimitMessage}
	fin := &session.OperationFinished{OperationID: op.OperationID, OperationKind: op.Kind, Outcome: session.OutcomeFailed, Error: &e}
	rec := a.startRecord(st, c)
	var facts []session.Fact
	var events []Event
	if failed != nil {
		se := session.ErrorInfo{Code: session.CodeModelError, Message: failureReason(failed.err)}
		facts = append(facts, session.Fact{Record: &session.StepFailed{OperationID: op.OperationID, StepID: failed.info.StepID, AttemptID: failed.info.AttemptID, Error: se}})
		events = append(events, ModelCompleted{Model: failed.info, Outcome: ModelOutcome{Outcome: "failed", Duration: failed.dur, ErrorType: provider.KindContextOverflow}})
	}
	facts = append(facts, session.Fact{Record: fin}, session.Fact{Record: rec})
	aborted, err := a.settle(ctx, facts, events...)
	if err != nil {
		return nil, true, fmt.Errorf("commit end of run for compaction: %w", err)
	}
	if aborted {
		return nil, true, nil // the planner reconciles the abort
	}
	if failed != nil {
		delete(r.ownAttempts, failed.info.AttemptID)
	}
	a.lastPromptTokens = 0
	a.mu.Lock()
	a.declinedContinuation = false // a new chain
	a.chainGap = true              // until its continuation is accepted
	a.mu.Unlock()
	res = a.finished(r, fin)
	a.emit(OperationStarted{OperationID: rec.OperationID, Kind: session.OperationCompaction})
	return res, true, nil
}

// beginTask resets the chain state at the start of Run, Resume or Compact.
func (a *Agent) beginTask() {
	a.mu.Lock()
	a.chainGap, a.chainStopped = false, false
	a.mu.Unlock()
}

// continueTask carries the chain of runtime.md §4 on after an operation
// ended: the compaction that the run's end started is driven, and a
// completed compaction whose run hit the context limit is followed by the
// continuation run, until an operation ends otherwise. It returns the
// result of the last operation.
func (a *Agent) continueTask(ctx context.Context, res Result) (Result, error) {
	defer func() {
		a.mu.Lock()
		a.chainGap = false
		a.mu.Unlock()
	}()
	for res.Blocked == "" {
		st := a.cfg.Log.State()
		var err error
		switch {
		case st.Operation != nil && st.Operation.Kind == session.OperationCompaction:
			res, err = a.drive(ctx, false)
		case st.ContinuationOwed && a.Pending():
			res, err = a.startContinuation(ctx)
		default:
			return res, nil
		}
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// startContinuation accepts the continuation run and drives it. An Esc
// between the compaction and this point stops the chain instead.
func (a *Agent) startContinuation(ctx context.Context) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	a.mu.Lock()
	a.chainGap = true // an Esc from here on stops the chain
	a.mu.Unlock()
	opID, entryID := a.cfg.NewID(), a.cfg.NewID()
	facts := []session.Fact{
		{ID: entryID, Entry: &session.UserEntry{Content: ContinuePrompt}},
		{Record: &session.RunStarted{OperationID: opID, InputEntryID: entryID}},
	}
	started := OperationStarted{OperationID: opID, Kind: session.OperationRun}
	stopped, err := a.write(ctx, a.chainWasStopped, facts, []Event{started})
	if err != nil {
		return Result{}, fmt.Errorf("start the continuation run: %w", err)
	}
	if stopped {
		a.mu.Lock()
		a.declinedContinuation = true
		a.mu.Unlock()
		return Result{Kind: session.OperationRun, Outcome: session.OutcomeAborted}, nil
	}
	return a.drive(ctx, false)
}

// chainWasStopped is the drop rule of a continuation run's acceptance: an
// Esc that found no open operation between the compaction and it stopped
// the chain. Called under mu.
func (a *Agent) chainWasStopped(op *session.Operation) bool {
	return a.chainStopped || abortIsDurable(op)
}

// summaryBudget is the size in bytes the summarized messages may take so
// that the summary request fits a window of this many tokens, leaving a
// quarter for the system prompt, the reply and the tokenizer's mood (at a
// conservative 3 bytes per token).
func summaryBudget(window int64) int {
	return int(window * 3 * 3 / 4)
}

// trimMarker ends a shortened message content.
const trimMarker = "\n[… %d characters left out to fit the summary request]"

// trimSummaryInput shortens msgs deterministically until their content
// fits budget bytes: the longest tool results first (each cut to the same
// length, as little as needed), then, if that is not enough, every other
// message the same way. Messages are copied, never changed in place.
func trimSummaryInput(msgs []session.Message, budget int) []session.Message {
	if contentSize(msgs) <= budget {
		return msgs
	}
	out := slices.Clone(msgs)
	for _, only := range []func(session.Message) bool{
		func(m session.Message) bool { return m.Role == session.RoleTool },
		func(session.Message) bool { return true },
	} {
		limit := fitLimit(out, budget, only)
		for i, m := range out {
			if only(m) && m.Content != nil && len(*m.Content) > limit {
				s := cutAt(*m.Content, limit) + fmt.Sprintf(trimMarker, utf8.RuneCountInString((*m.Content)[len(cutAt(*m.Content, limit)):]))
				out[i].Content = &s
			}
		}
		if contentSize(out) <= budget {
			break
		}
	}
	return out
}

// fitLimit is the largest content length L such that cutting the selected
// messages to L (plus the marker) brings msgs within budget, or 0.
func fitLimit(msgs []session.Message, budget int, only func(session.Message) bool) int {
	size := func(limit int) int {
		n := 0
		for _, m := range msgs {
			c := messageSize(m)
			if only(m) && m.Content != nil && len(*m.Content) > limit {
				c -= len(*m.Content) - limit - len(trimMarker)
			}
			n += c
		}
		return n
	}
	lo, hi := 0, 0
	for _, m := range msgs {
		if m.Content != nil {
			hi = max(hi, len(*m.Content))
		}
	}
	for lo < hi { // largest limit with size(limit) <= budget
		mid := (lo + hi + 1) / 2
		if size(mid) <= budget {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// cutAt is s cut to at most n bytes at a rune boundary.
func cutAt(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func contentSize(msgs []session.Message) int {
	n := 0
	for _, m := range msgs {
		n += messageSize(m)
	}
	return n
}

// messageSize approximates the encoded size of a message.
func messageSize(m session.Message) int {
	n := 48 + len(m.ToolCallID)
	if m.Content != nil {
		n += len(*m.Content)
	}
	for _, c := range m.ToolCalls {
		n += 64 + len(c.ID) + len(c.Function.Name) + len(c.Function.Arguments)
	}
	return n
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
