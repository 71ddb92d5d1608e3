package checkpoint

import (
	"context"
	"errors"
	"slices"
)

// keptEffects bounds the records a Recorder keeps for Changed: the host
// asks right after the effect, or never.
const keptEffects = 16

// keep remembers the records of one effect for Changed.
func (r *Recorder) keep(toolStartedID string, before, after Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.kept == nil || len(r.kept) >= keptEffects {
		r.kept = map[string][2]Record{}
	}
	r.kept[toolStartedID] = [2]Record{before, after}
}

// keepPaths remembers what a command run as a transaction changed: its
// upper layer says so exactly, with no records to compare.
func (r *Recorder) keepPaths(toolStartedID string, paths []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.keptPaths == nil || len(r.keptPaths) >= keptEffects {
		r.keptPaths = map[string][]string{}
	}
	r.keptPaths[toolStartedID] = paths
}

// errNotKept is Changed of an effect the recorder has no records of.
var errNotKept = errors.New("no checkpoints of this effect")

// Changed lists the paths (relative to the working directory, or
// absolute) an effect changed, from its before and after checkpoints;
// the records are forgotten. Language-server diagnostics ask it which
// files a command rewrote.
func (r *Recorder) Changed(ctx context.Context, toolStartedID string) ([]string, error) {
	r.mu.Lock()
	recs, ok := r.kept[toolStartedID]
	delete(r.kept, toolStartedID)
	paths, txn := r.keptPaths[toolStartedID]
	delete(r.keptPaths, toolStartedID)
	r.mu.Unlock()
	if txn {
		return slices.Sorted(slices.Values(paths)), nil
	}
	if !ok {
		return nil, errNotKept
	}
	return r.store.Changed(ctx, recs[0], recs[1])
}

// Changed lists the paths whose state differs between two records of
// one effect (sorted). It costs what changed, like a rewind's plan.
func (s *Store) Changed(ctx context.Context, before, after Record) ([]string, error) {
	if before.Missing != "" || after.Missing != "" {
		return nil, errors.New("a checkpoint is missing: " + before.Missing + after.Missing)
	}
	p := &planner{s: s, ctx: ctx, ignored: map[string]bool{}, inTree: map[string]bool{}, candidates: map[string]bool{}, gitKnown: map[string]map[string]*File{}}
	b, a := newView(before), newView(after)
	for _, v := range []*view{b, a} {
		if v.ref != "" {
			p.trees = append(p.trees, v)
		}
	}
	cands, err := p.candidatePaths(b, a)
	if err != nil {
		return nil, err
	}
	p.candidates = cands
	out := p.changedPaths(&pair{before: b, after: a, changed: cands})
	if p.err != nil {
		return nil, p.err
	}
	slices.Sort(out)
	return out, nil
}
