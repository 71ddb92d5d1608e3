package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// keepMessages is the minimum number of active-context messages a
// compaction retains (runtime.md §4).
const keepMessages = 6

// cut is where a compaction splits the active context, and the durable
// source partition that coincides with it.
type cut struct {
	index        int      // ActiveContext[:index] is summarized
	compacted    []string // source entry ids before the cut
	retained     []string // source entry ids from the cut on
	inputThrough string   // the last source entry id
	source       []session.RetainedMessage
}

// compactionCut computes the cut on the current active context: keep at
// least the last keepMessages messages, then move earlier until the first
// retained message is a user message, so no turn is split. It is a pure
// function of the state, so a resumed compaction sends the same request.
func compactionCut(st *session.State) (cut, error) {
	ctx, ids := st.ActiveContext, st.ActiveEntryIDs
	if len(ids) != len(ctx) {
		return cut{}, fmt.Errorf("active context has %d messages but %d source ids", len(ctx), len(ids))
	}
	for k := len(ctx) - keepMessages; k >= 1; k-- {
		if ctx[k].Role != session.RoleUser || ids[k] == "" {
			continue
		}
		c := cut{index: k}
		for i, id := range ids {
			if id == "" {
				continue // the prior summary is not a source entry
			}
			if i < k {
				c.compacted = append(c.compacted, id)
			} else {
				c.retained = append(c.retained, id)
			}
			c.source = append(c.source, session.RetainedMessage{SourceEntryID: id, Message: ctx[i]})
			c.inputThrough = id
		}
		if len(c.compacted) == 0 {
			break // only the prior summary precedes the cut
		}
		return c, nil
	}
	return cut{}, ErrNothingToCompact
}

// operationCut is the cut of the open compaction as its compactionStarted
// recorded it: a resumed compaction summarizes exactly the messages the
// record names, whoever started it and whatever cut rule they used.
func operationCut(st *session.State) (cut, error) {
	rec := st.Operation.Compaction
	if rec == nil {
		return cut{}, fmt.Errorf("compaction %s has no compactionStarted in the state", st.Operation.OperationID)
	}
	pos := make(map[string]int, len(st.ActiveEntryIDs))
	for i, id := range st.ActiveEntryIDs {
		if id != "" {
			pos[id] = i
		}
	}
	c := cut{index: len(st.ActiveContext), compacted: rec.CompactedEntryIDs, retained: rec.RetainedEntryIDs, inputThrough: rec.InputThroughEntryID}
	if len(rec.RetainedEntryIDs) > 0 {
		i, ok := pos[rec.RetainedEntryIDs[0]]
		if !ok {
			return cut{}, fmt.Errorf("compaction %s retains %s, which is not in the active context", rec.OperationID, rec.RetainedEntryIDs[0])
		}
		c.index = i
	}
	for _, id := range append(append([]string(nil), rec.CompactedEntryIDs...), rec.RetainedEntryIDs...) {
		i, ok := pos[id]
		if !ok {
			return cut{}, fmt.Errorf("compaction %s names %s, which is not in the active context", rec.OperationID, id)
		}
		c.source = append(c.source, session.RetainedMessage{SourceEntryID: id, Message: st.ActiveContext[i]})
	}
	return c, nil
}

// Compact runs /compact as its own durable operation on an idle session.
// It returns ErrNothingToCompact, writing nothing, when no user boundary
// exists.
func (a *Agent) Compact(ctx context.Context) (Result, CompactStats, error) {
	if !a.busy.CompareAndSwap(false, true) {
		return Result{}, CompactStats{}, ErrBusy
	}
	defer a.busy.Store(false)
	return a.compact(ctx)
}

func (a *Agent) compact(ctx context.Context) (Result, CompactStats, error) {
	if res, err := a.settleOpen(ctx); err != nil || res != nil {
		return derefResult(res), CompactStats{}, err
	}
	st := a.cfg.Log.State()
	c, err := compactionCut(st)
	if err != nil {
		return Result{}, CompactStats{}, err
	}
	digest := session.SourceDigest(c.source)
	stats := CompactStats{Compacted: c.index, Kept: len(st.ActiveContext) - c.index}
	opID := a.cfg.NewID()
	rec := &session.CompactionStarted{
		OperationID:         opID,
		InputThroughEntryID: c.inputThrough,
		ResultEntryID:       a.cfg.NewID(),
		CompactedEntryIDs:   c.compacted,
		RetainedEntryIDs:    nonNil(c.retained),
		SourceDigest:        digest,
	}
	started := OperationStarted{OperationID: opID, Kind: session.OperationCompaction}
	if err := a.commit(ctx, []session.Fact{{Record: rec}}, started); err != nil {
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

// compactionEntry builds the entry that settles a compaction step.
func (a *Agent) compactionEntry(st *session.State, resp provider.Response) (*session.CompactionEntry, error) {
	c, err := operationCut(st)
	if err != nil {
		return nil, err
	}
	tail := make([]session.RetainedMessage, 0, len(c.retained))
	for _, m := range c.source {
		if len(tail) < len(c.retained) && m.SourceEntryID == c.retained[len(tail)] {
			tail = append(tail, m)
		}
	}
	return &session.CompactionEntry{
		OperationID:             st.Operation.OperationID,
		Summary:                 *resp.Content,
		CompactedThroughEntryID: c.compacted[len(c.compacted)-1],
		RetainedTail:            tail,
	}, nil
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

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
