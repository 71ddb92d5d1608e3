package session

import (
	"hash"
	"slices"
)

// idKind says what an id names. Fact ids and the ids that records mint
// (operation, step, attempt, provisioned result entry) share one
// namespace: a collision is DUPLICATE_ID.
type idKind uint8

const (
	idUserEntry idKind = iota + 1
	idAssistantEntry
	idToolEntry // a result entry, started or synthetic
	idCompactionEntry
	idToolStarted
	idFact // any other record, and usage facts
	idOperation
	idStep
	idAttempt
	idProvisioned // a resultEntryId whose entry is not written yet
)

// txLog records what a transaction changed so that a rejected (or merely
// checked) transaction can be undone in time proportional to its size.
type txLog struct {
	saved      State
	transcript []Message
	histIDs    []string
	// The history hash as it was before this transaction advanced it.
	hist       hash.Hash
	histHashed int
	histSaved  bool
	active     []Message
	activeIDs  []string
	undo       []undoID
	// fresh says which parts of st.Operation were created or copied
	// during this transaction and may be changed in place; any other part
	// may be shared with a State snapshot or the saved state and is
	// copied before its first change. While the reducer is loading,
	// fresh parts stay fresh from one transaction to the next.
	fresh freshParts
}

type freshParts struct{ op, step, assistant, tools bool }

type undoID struct {
	key     idKey
	old     idInfo
	existed bool
}

// apply runs the transaction; it keeps the result only when keep is true
// and the transaction is valid.
func (r *Reducer) apply(tx []Fact, keep bool) *Corruption {
	if len(tx) == 0 {
		return corrupt(CorruptEmptyTransaction, 0, "a transaction must hold at least one fact")
	}
	r.begin()
	for i := range tx {
		if c := r.applyFact(&tx[i]); c != nil {
			r.rollback()
			return c
		}
	}
	if !keep {
		r.rollback()
		return nil
	}
	r.tx.undo = r.tx.undo[:0]
	if !r.loading {
		r.tx.fresh = freshParts{}
	}
	return nil
}

func (r *Reducer) begin() {
	r.tx.saved = r.st
	r.tx.transcript = r.transcript
	r.tx.histIDs = r.histIDs
	r.tx.histSaved = false
	r.tx.active = r.active
	r.tx.activeIDs = r.activeIDs
	r.tx.undo = r.tx.undo[:0]
	if !r.loading {
		r.tx.fresh = freshParts{}
	}
}

func (r *Reducer) rollback() {
	r.st = r.tx.saved
	r.transcript = r.tx.transcript
	r.histIDs = r.tx.histIDs
	if r.tx.histSaved {
		r.hist, r.histHashed = r.tx.hist, r.tx.histHashed
		r.tx.histSaved, r.tx.hist = false, nil
	}
	r.active = r.tx.active
	r.activeIDs = r.tx.activeIDs
	for i := len(r.tx.undo) - 1; i >= 0; i-- {
		u := r.tx.undo[i]
		if u.existed {
			r.ids.put(u.key, u.old)
		} else {
			r.ids.remove(u.key)
		}
	}
	r.tx.undo = r.tx.undo[:0]
	r.tx.fresh = freshParts{}
}

// setID records what id names, remembering the previous value.
func (r *Reducer) setID(id string, kind idKind, op string) {
	k := r.ids.key(id)
	old, existed := r.ids.lookup(k)
	r.tx.undo = append(r.tx.undo, undoID{key: k, old: old, existed: existed})
	r.ids.put(k, idInfo{kind: kind, op: r.ids.opRef(op)})
}

// newID records an id known to be new (one map lookup fewer than setID:
// the map is the reducer's largest structure).
func (r *Reducer) newID(id string, kind idKind, op string) {
	var ref opRef
	if kind == idOperation {
		r.ids.ops++ // an operation belongs to itself
		ref = r.ids.ops
	} else {
		ref = r.ids.opRef(op)
	}
	k := r.ids.key(id)
	r.tx.undo = append(r.tx.undo, undoID{key: k})
	r.ids.put(k, idInfo{kind: kind, op: ref})
}

// mint registers an id that a record introduces; it must be new.
func (r *Reducer) mint(id string, kind idKind, op, what string) *Corruption {
	if _, ok := r.ids.get(id); ok {
		return corrupt(CorruptDuplicateID, 0, "%s %s is already used", what, id)
	}
	r.newID(id, kind, op)
	return nil
}

// mutOp returns the open operation for changing its own fields, copied
// first if a State snapshot may share it; mutStep, mutAssistant and
// mutTools also copy the part they name. Copying only what changes keeps
// a transaction's cost independent of how much the operation holds.
func (r *Reducer) mutOp() *Operation {
	if !r.tx.fresh.op {
		c := *r.st.Operation
		r.st.Operation = &c
		r.tx.fresh.op = true
	}
	return r.st.Operation
}

func (r *Reducer) mutStep() *Operation {
	op := r.mutOp()
	if !r.tx.fresh.step {
		s := *op.Step
		op.Step = &s
		r.tx.fresh.step = true
	}
	return op
}

func (r *Reducer) mutAssistant() *Operation {
	op := r.mutOp()
	if !r.tx.fresh.assistant {
		a := *op.Assistant
		a.Calls = slices.Clone(a.Calls)
		op.Assistant = &a
		r.tx.fresh.assistant = true
	}
	return op
}

func (r *Reducer) mutTools() *Operation {
	op := r.mutOp()
	if !r.tx.fresh.tools {
		op.ToolCalls = slices.Clone(op.ToolCalls)
		r.tx.fresh.tools = true
	}
	return op
}

// setOp installs a new (or no) open operation.
func (r *Reducer) setOp(op *Operation) {
	if op != nil {
		r.st.ContinuationOwed = false
	}
	r.st.Operation = op
	r.tx.fresh = freshParts{op: true, step: true, assistant: true, tools: true}
}

// stringSlab hands out pointers to copies of strings, many to one
// allocation. A message's content pointer then keeps alive its string
// only, not the entry it came from with that entry's ids.
type stringSlab []string

func (s *stringSlab) ptr(v string) *string {
	if len(*s) == cap(*s) {
		*s = make([]string, 0, 256)
	}
	*s = append(*s, v)
	return &(*s)[len(*s)-1]
}

// appendMessage appends a model-visible message entry to the transcript
// and the active context; it becomes the boundary.
func (r *Reducer) appendMessage(id string, m Message) {
	r.transcript = append(r.transcript, m)
	r.histIDs = append(r.histIDs, id)
	if !r.loading {
		// While loading, the active context's tail is the transcript's
		// from activeFrom on, copied once at the end (finishLoad).
		r.active = append(r.active, m)
		r.activeIDs = append(r.activeIDs, id)
	}
	r.st.Boundary = id
}

func (r *Reducer) applyFact(f *Fact) *Corruption {
	if f.Seq != r.st.Facts+1 {
		return corrupt(CorruptSeqMismatch, f.Seq, "seq %d, want %d", f.Seq, r.st.Facts+1)
	}
	payloads := 0
	if f.Entry != nil {
		payloads++
	}
	if f.Record != nil {
		payloads++
	}
	if f.Usage != nil {
		payloads++
	}
	if payloads != 1 || f.ID == "" || nilPayload(f) {
		return corrupt(CorruptInvalidFact, f.Seq, "a fact has an id and exactly one of entry, record and usage")
	}
	info, exists := r.ids.get(f.ID)
	provisioned := exists && info.kind == idProvisioned
	if exists && (!provisioned || f.Entry == nil) {
		return corrupt(CorruptDuplicateID, f.Seq, "fact id %s is already used", f.ID)
	}
	var c *Corruption
	switch {
	case f.Entry != nil:
		c = r.applyEntry(f, provisioned)
	case f.Record != nil:
		kind := idFact
		if _, ok := f.Record.(*ToolStarted); ok {
			kind = idToolStarted
		}
		r.newID(f.ID, kind, f.Record.Operation())
		c = r.applyRecord(f)
	default:
		r.newID(f.ID, idFact, f.Usage.OperationID)
		c = r.applyUsage(f.Usage)
	}
	if c != nil {
		if c.Seq == 0 {
			c.Seq = f.Seq
		}
		return c
	}
	r.st.Facts++
	return nil
}

// nilPayload reports a payload interface holding a nil pointer.
func nilPayload(f *Fact) bool {
	switch p := f.Entry.(type) {
	case *UserEntry:
		return p == nil
	case *AssistantEntry:
		return p == nil
	case *ToolResultEntry:
		return p == nil
	case *SyntheticEntry:
		return p == nil
	case *CompactionEntry:
		return p == nil
	}
	switch p := f.Record.(type) {
	case *RunStarted:
		return p == nil
	case *CompactionStarted:
		return p == nil
	case *StepAttempt:
		return p == nil
	case *StepFailed:
		return p == nil
	case *ToolStarted:
		return p == nil
	case *AbortRequested:
		return p == nil
	case *OperationFinished:
		return p == nil
	}
	return false
}

// openOp resolves the operation a record names: it must be the open one
// and of the given kind ("" for any).
func (r *Reducer) openOp(id string, kind OperationKind, what string) (*Operation, *Corruption) {
	op := r.st.Operation
	if op != nil && op.OperationID == id {
		if kind != "" && op.Kind != kind {
			return nil, corrupt(CorruptInvalidTransition, 0, "%s needs a %s operation, %s is a %s", what, kind, id, op.Kind)
		}
		return op, nil
	}
	if info, ok := r.ids.get(id); ok && info.kind == idOperation {
		return nil, corrupt(CorruptInvalidTransition, 0, "%s for operation %s, which is not open", what, id)
	}
	return nil, corrupt(CorruptInvalidReference, 0, "%s names unknown operation %s", what, id)
}

// ref resolves a reference that must name an id of the given kind that
// belongs to operation op.
func (r *Reducer) ref(id string, kind idKind, op, what string) *Corruption {
	info, ok := r.ids.get(id)
	switch {
	case !ok || info.kind != kind:
		return corrupt(CorruptInvalidReference, 0, "%s %s does not exist", what, id)
	case info.op != r.ids.opRef(op):
		return corrupt(CorruptInvalidReference, 0, "%s %s belongs to another operation", what, id)
	}
	return nil
}

func (r *Reducer) applyUsage(u *UsageFact) *Corruption {
	if (u.AttemptID == "") == (u.ToolStartedID == "") {
		return corrupt(CorruptInvalidFact, 0, "a usage fact has exactly one owner")
	}
	if info, ok := r.ids.get(u.OperationID); !ok || info.kind != idOperation {
		return corrupt(CorruptInvalidReference, 0, "usage names unknown operation %s", u.OperationID)
	}
	var c *Corruption
	if u.AttemptID != "" {
		c = r.ref(u.AttemptID, idAttempt, u.OperationID, "usage owner attempt")
	} else {
		c = r.ref(u.ToolStartedID, idToolStarted, u.OperationID, "usage owner toolStarted")
	}
	if c != nil {
		return c
	}
	sum := r.st.Usage
	for _, p := range [...]struct {
		total *int64
		n     int64
	}{
		{&sum.Input, u.Usage.Input},
		{&sum.Output, u.Usage.Output},
		{&sum.CacheRead, u.Usage.CacheRead},
		{&sum.CacheWrite, u.Usage.CacheWrite},
	} {
		if p.n < 0 || p.n > maxSafeInteger {
			return corrupt(CorruptInvalidFact, 0, "usage counter %d is outside 0..2^53-1", p.n)
		}
		if *p.total > maxSafeInteger-p.n {
			return corrupt(CorruptInvalidFact, 0, "usage total overflows 2^53-1")
		}
		*p.total += p.n
	}
	r.st.Usage = sum
	if op := r.st.Operation; op != nil && op.Step != nil && op.Step.AttemptID == u.AttemptID && op.Step.StepKind == StepAssistant {
		r.st.LastAssistantUsage = u.Usage
	}
	return nil
}

// snapshotCache remembers the digest of the last configuration snapshot:
// consecutive steps of a session almost always share it.
type snapshotCache struct {
	ok   bool
	snap ConfigurationSnapshot
	sum  string
}

func (c *snapshotCache) digest(s *ConfigurationSnapshot) string {
	if c.ok && equalSnapshot(&c.snap, s) {
		return c.sum
	}
	c.snap = *s
	c.snap.Tools = slices.Clone(s.Tools) // the caller's slice may change later
	c.sum = ConfigurationDigest(*s)
	c.ok = true
	return c.sum
}

func equalSnapshot(a, b *ConfigurationSnapshot) bool {
	return a.Model == b.Model && a.SystemPromptDigest == b.SystemPromptDigest &&
		a.AdapterIdentity == b.AdapterIdentity && a.RoutingIdentity == b.RoutingIdentity &&
		a.OutputOptionsDigest == b.OutputOptionsDigest && slices.Equal(a.Tools, b.Tools)
}
