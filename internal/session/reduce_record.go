package session

import (
	"bytes"
	"slices"
)

func (r *Reducer) applyRecord(f *Fact) *Corruption {
	switch rec := f.Record.(type) {
	case *RunStarted:
		return r.applyRunStarted(rec)
	case *CompactionStarted:
		return r.applyCompactionStarted(rec)
	case *StepAttempt:
		return r.applyStepAttempt(rec)
	case *StepFailed:
		return r.applyStepFailed(rec)
	case *ToolStarted:
		return r.applyToolStarted(f.ID, rec)
	case *AbortRequested:
		return r.applyAbort(rec)
	case *OperationFinished:
		return r.applyFinished(rec)
	}
	return corrupt(CorruptInvalidFact, 0, "unknown record type %T", f.Record)
}

func (r *Reducer) applyRunStarted(rec *RunStarted) *Corruption {
	if c := r.mint(rec.OperationID, idOperation, rec.OperationID, "operationId"); c != nil {
		return c
	}
	if op := r.st.Operation; op != nil {
		return corrupt(CorruptInvalidTransition, 0, "operation %s is still open", op.OperationID)
	}
	if info, ok := r.ids.get(rec.InputEntryID); !ok || info.kind != idUserEntry {
		return corrupt(CorruptInvalidReference, 0, "inputEntryId %s is not a user entry", rec.InputEntryID)
	}
	if rec.InputEntryID != r.st.Boundary {
		return corrupt(CorruptInvalidTransition, 0, "inputEntryId %s is not the last message entry", rec.InputEntryID)
	}
	r.setOp(&Operation{Kind: OperationRun, OperationID: rec.OperationID, InputEntryID: rec.InputEntryID})
	return nil
}

func (r *Reducer) applyCompactionStarted(rec *CompactionStarted) *Corruption {
	if c := r.mint(rec.OperationID, idOperation, rec.OperationID, "operationId"); c != nil {
		return c
	}
	if c := r.mint(rec.ResultEntryID, idProvisioned, rec.OperationID, "resultEntryId"); c != nil {
		return c
	}
	if op := r.st.Operation; op != nil {
		return corrupt(CorruptInvalidTransition, 0, "operation %s is still open", op.OperationID)
	}
	// The source is every message entry of the session through the
	// boundary, in seq order, the entries earlier compactions summarized
	// included (runtime.md §4); the summary of an earlier compaction is not
	// an entry and never a source.
	ids := r.histIDs
	nc := len(rec.CompactedEntryIDs)
	switch {
	case len(rec.CompactedEntryIDs) == 0:
		return corrupt(CorruptInvalidFact, 0, "compactedEntryIds must not be empty")
	case rec.InputThroughEntryID != r.st.Boundary:
		return corrupt(CorruptInvalidReference, 0, "inputThroughEntryId %s is not the last message entry", rec.InputThroughEntryID)
	case nc+len(rec.RetainedEntryIDs) != len(ids) ||
		!slices.Equal(rec.CompactedEntryIDs, ids[:nc]) ||
		!slices.Equal(rec.RetainedEntryIDs, ids[nc:]):
		return corrupt(CorruptInvalidReference, 0, "compactedEntryIds + retainedEntryIds are not every message entry of the session in order (runtime.md §4: the whole history, not the active context)")
	case rec.SourceDigest != r.historyDigest():
		return corrupt(CorruptInvalidReference, 0, "sourceDigest is not the digest of every message entry of the session through inputThroughEntryId (runtime.md §4: the whole history, not the active context)")
	}
	r.setOp(&Operation{
		Kind:                OperationCompaction,
		OperationID:         rec.OperationID,
		InputThroughEntryID: rec.InputThroughEntryID,
		ResultEntryID:       rec.ResultEntryID,
		Compaction:          rec,
	})
	return nil
}

// historyDigest is SourceDigest over every message entry so far. The
// hash runs on from one compaction to the next, so each message is hashed
// once however many compactions follow it (a file with a compaction every
// few runs would otherwise cost the square of its length). A transaction
// that is undone restores the hash it advanced.
func (r *Reducer) historyDigest() string {
	if !r.loading && !r.tx.histSaved {
		r.tx.histSaved, r.tx.histHashed, r.tx.hist = true, r.histHashed, nil
		if r.hist != nil {
			r.tx.hist = cloneHash(r.hist)
		}
	}
	if r.hist == nil {
		r.hist = newHistoryHash()
	}
	r.histBuf = hashHistory(r.hist, r.transcript, r.histIDs, r.histHashed, r.histBuf)
	r.histHashed = len(r.histIDs)
	return sumHistory(cloneHash(r.hist))
}

// HistoryDigest is SourceDigest over every message entry of the session
// (Transcript with TranscriptEntryIDs): the sourceDigest of a compaction
// started now (runtime.md §4). It starts from the hash the reducer kept
// at the last compactionStarted, so it costs the messages since then, not
// the session.
func (s *State) HistoryDigest() string {
	h := newHistoryHash()
	from := 0
	if s.histHash != nil {
		h, from = cloneHash(s.histHash), s.histHashed
	}
	hashHistory(h, s.Transcript, s.TranscriptEntryIDs, from, nil)
	return sumHistory(h)
}

func (r *Reducer) applyStepAttempt(rec *StepAttempt) *Corruption {
	if rec.Attempt == 1 {
		if c := r.mint(rec.StepID, idStep, rec.OperationID, "stepId"); c != nil {
			return c
		}
	}
	if c := r.mint(rec.AttemptID, idAttempt, rec.OperationID, "attemptId"); c != nil {
		return c
	}
	kind := OperationRun
	switch rec.StepKind {
	case StepAssistant:
	case StepCompaction:
		kind = OperationCompaction
	default:
		return corrupt(CorruptInvalidFact, 0, "unknown stepKind %q", rec.StepKind)
	}
	op, c := r.openOp(rec.OperationID, kind, "stepAttempt")
	if c != nil {
		return c
	}
	if rec.ConfigurationDigest != r.snap.digest(&rec.ConfigurationSnapshot) {
		return corrupt(CorruptInvalidFact, 0, "configurationDigest is not digest(configurationSnapshot)")
	}
	if op.AbortRequested {
		return corrupt(CorruptInvalidTransition, 0, "operation %s is aborting; no new attempt", op.OperationID)
	}
	prev := op.Step
	switch rec.Attempt {
	case 1:
		if c := r.checkNewStep(op); c != nil {
			return c
		}
		if rec.ContextThroughEntryID != r.st.Boundary {
			return corrupt(CorruptInvalidTransition, 0, "attempt 1 records boundary %s, the boundary is %s", rec.ContextThroughEntryID, r.st.Boundary)
		}
	case 2:
		switch {
		case prev == nil || prev.Status != StepAttempting || prev.Attempt != 1:
			return corrupt(CorruptInvalidTransition, 0, "attempt 2 retries an open attempt 1")
		case rec.StepID != prev.StepID || rec.ContextThroughEntryID != prev.ContextThroughEntryID ||
			rec.ConfigurationDigest != prev.ConfigurationDigest:
			return corrupt(CorruptInvalidFact, 0, "attempt 2 repeats attempt 1's stepId, boundary and configuration digest")
		}
	default:
		return corrupt(CorruptInvalidFact, 0, "attempt is 1 or 2")
	}
	op = r.mutOp()
	step := Step{
		OperationID:           rec.OperationID,
		StepID:                rec.StepID,
		AttemptID:             rec.AttemptID,
		Attempt:               rec.Attempt,
		StepKind:              rec.StepKind,
		Status:                StepAttempting,
		ContextThroughEntryID: rec.ContextThroughEntryID,
		ConfigurationSnapshot: rec.ConfigurationSnapshot,
		ConfigurationDigest:   rec.ConfigurationDigest,
	}
	if r.loading && r.tx.fresh.step && op.Step != nil {
		*op.Step = step // while loading, a fresh step is nobody else's
	} else {
		op.Step = &step
	}
	r.tx.fresh.step = true
	return nil
}

// checkNewStep checks that op may start a new step: none yet, or (runs
// only) the previous reply asked for tools and every call is answered.
func (r *Reducer) checkNewStep(op *Operation) *Corruption {
	prev := op.Step
	switch {
	case prev == nil:
		return nil
	case prev.Status == StepAttempting:
		return corrupt(CorruptInvalidTransition, 0, "step %s is still open", prev.StepID)
	case prev.Status == StepFailedS:
		return corrupt(CorruptInvalidTransition, 0, "step %s failed; the operation must finish", prev.StepID)
	case op.Kind == OperationCompaction:
		return corrupt(CorruptInvalidTransition, 0, "a compaction has one step")
	case op.Assistant.StopReason != StopReasonToolUse:
		return corrupt(CorruptInvalidTransition, 0, "the %s reply of step %s ends the run", op.Assistant.StopReason, prev.StepID)
	}
	if i := unanswered(op); i >= 0 {
		return corrupt(CorruptInvalidTransition, 0, "tool call %d of entry %s has no result yet", i, op.Assistant.EntryID)
	}
	return nil
}

// unanswered returns the index of the first call of the current assistant
// entry without a result, or -1.
func unanswered(op *Operation) int {
	if op.Assistant == nil {
		return -1
	}
	return slices.IndexFunc(op.Assistant.Calls, func(c CallState) bool { return !c.Answered })
}

func (r *Reducer) applyStepFailed(rec *StepFailed) *Corruption {
	op, c := r.openOp(rec.OperationID, "", "stepFailed")
	if c != nil {
		return c
	}
	if c := r.ref(rec.AttemptID, idAttempt, rec.OperationID, "attemptId"); c != nil {
		return c
	}
	step := op.Step
	switch {
	case step.AttemptID != rec.AttemptID || step.Status != StepAttempting:
		return corrupt(CorruptInvalidTransition, 0, "attempt %s is closed", rec.AttemptID)
	case rec.StepID != step.StepID:
		return corrupt(CorruptInvalidReference, 0, "attempt %s belongs to step %s, not %s", rec.AttemptID, step.StepID, rec.StepID)
	case rec.Error.Code == "" || rec.Error.Message == "":
		return corrupt(CorruptInvalidFact, 0, "stepFailed has an error code and message")
	}
	op = r.mutStep()
	op.Step.Status = StepFailedS
	e := rec.Error
	op.Step.Failure = &e
	return nil
}

func (r *Reducer) applyToolStarted(id string, rec *ToolStarted) *Corruption {
	if c := r.mint(rec.ResultEntryID, idProvisioned, rec.OperationID, "resultEntryId"); c != nil {
		return c
	}
	op, c := r.openOp(rec.OperationID, OperationRun, "toolStarted")
	if c != nil {
		return c
	}
	if c := r.ref(rec.AssistantEntryID, idAssistantEntry, rec.OperationID, "assistantEntryId"); c != nil {
		return c
	}
	a := op.Assistant
	switch {
	case rec.Replay != "safe" && rec.Replay != "never":
		return corrupt(CorruptInvalidFact, 0, `replay is "safe" or "never"`)
	case !isObject(rec.Arguments):
		return corrupt(CorruptInvalidFact, 0, "toolStarted arguments are a JSON object")
	case op.AbortRequested:
		return corrupt(CorruptInvalidTransition, 0, "operation %s is aborting; no tool starts", op.OperationID)
	case a.EntryID != rec.AssistantEntryID:
		return corrupt(CorruptInvalidTransition, 0, "assistant entry %s is not the current one", rec.AssistantEntryID)
	case rec.ToolIndex < 0 || rec.ToolIndex >= len(a.ToolCalls):
		return corrupt(CorruptInvalidReference, 0, "assistant entry %s has no tool call %d", rec.AssistantEntryID, rec.ToolIndex)
	}
	call := a.ToolCalls[rec.ToolIndex]
	switch cs := a.Calls[rec.ToolIndex]; {
	case rec.StepID != a.StepID || rec.ToolCallID != call.ID || rec.ToolName != call.Function.Name:
		return corrupt(CorruptInvalidReference, 0, "toolStarted does not match the step, call id or name of call %d", rec.ToolIndex)
	case a.StopReason == StopReasonLength:
		return corrupt(CorruptInvalidTransition, 0, "the calls of a length reply are never started")
	case cs.ToolStartedID != "" || cs.Answered:
		return corrupt(CorruptInvalidTransition, 0, "call %d was already started or answered", rec.ToolIndex)
	}

	r.mutTools()
	op = r.mutAssistant()
	op.Assistant.Calls[rec.ToolIndex].ToolStartedID = id
	ts := ToolState{ToolStarted: *rec, ToolStartedID: id, Status: ToolPending}
	if op.ToolCalls == nil {
		// Room for every call at once; a new array shares nothing.
		op.ToolCalls = make([]ToolState, 0, len(a.ToolCalls))
	}
	at, _ := slices.BinarySearchFunc(op.ToolCalls, rec.ToolIndex, func(t ToolState, i int) int { return t.ToolIndex - i })
	op.ToolCalls = slices.Insert(op.ToolCalls, at, ts)
	return nil
}

func isObject(v []byte) bool {
	v = bytes.TrimLeft(v, " \t\r\n")
	return len(v) > 0 && v[0] == '{'
}

func (r *Reducer) applyAbort(rec *AbortRequested) *Corruption {
	op, c := r.openOp(rec.OperationID, "", "abortRequested")
	if c != nil {
		return c
	}
	switch {
	case rec.OperationKind != op.Kind:
		return corrupt(CorruptInvalidReference, 0, "operation %s is a %s, not a %s", op.OperationID, op.Kind, rec.OperationKind)
	case rec.Reason != AbortReasonEscape:
		return corrupt(CorruptInvalidFact, 0, `abortRequested reason is "escape"`)
	case (rec.Phase == PhaseTool) != (rec.ToolCallID != ""):
		return corrupt(CorruptInvalidFact, 0, "abortRequested has a toolCallId exactly for phase tool")
	}
	switch rec.Phase {
	case PhaseModel, PhaseTool:
		if op.Kind != OperationRun {
			return corrupt(CorruptInvalidTransition, 0, "a compaction is aborted in phase compact")
		}
	case PhaseCompact:
		if op.Kind != OperationCompaction {
			return corrupt(CorruptInvalidTransition, 0, "phase compact aborts a compaction")
		}
	default:
		return corrupt(CorruptInvalidFact, 0, "unknown phase %q", rec.Phase)
	}
	if rec.Phase == PhaseTool {
		if op.Assistant == nil || !slices.ContainsFunc(op.Assistant.ToolCalls, func(c ToolCall) bool { return c.ID == rec.ToolCallID }) {
			return corrupt(CorruptInvalidReference, 0, "the current assistant entry has no tool call %q", rec.ToolCallID)
		}
	}
	if op.AbortRequested {
		return nil // a repeated request changes nothing
	}
	op = r.mutOp()
	op.AbortRequested = true
	op.Abort = rec
	return nil
}

func (r *Reducer) applyFinished(rec *OperationFinished) *Corruption {
	op, c := r.openOp(rec.OperationID, "", "operationFinished")
	if c != nil {
		return c
	}
	if rec.OperationKind != op.Kind {
		return corrupt(CorruptInvalidReference, 0, "operation %s is a %s, not a %s", op.OperationID, op.Kind, rec.OperationKind)
	}
	if op.Step != nil && op.Step.Status == StepAttempting {
		return corrupt(CorruptInvalidTransition, 0, "attempt %s is still open", op.Step.AttemptID)
	}
	if i := unanswered(op); i >= 0 {
		return corrupt(CorruptInvalidTransition, 0, "tool call %d of entry %s has no result yet", i, op.Assistant.EntryID)
	}
	switch rec.Outcome {
	case OutcomeCompleted:
		if c := r.checkCompleted(op, rec); c != nil {
			return c
		}
	case OutcomeAborted:
		if !op.AbortRequested {
			return corrupt(CorruptInvalidTransition, 0, "an aborted terminal needs a prior abortRequested")
		}
	case OutcomeFailed:
		if op.AbortRequested {
			return corrupt(CorruptInvalidTransition, 0, "an aborting operation finishes aborted")
		}
		if rec.Error == nil || rec.Error.Code == "" || rec.Error.Message == "" {
			return corrupt(CorruptInvalidFact, 0, "a failed terminal has an error code and message")
		}
	default:
		return corrupt(CorruptInvalidFact, 0, "unknown outcome %q", rec.Outcome)
	}
	r.finished(op, rec)
	r.setOp(nil)
	return nil
}

// finished records the terminal for the compaction chain: a completed
// compaction right after a run that hit the context limit owes the
// continuation run.
func (r *Reducer) finished(op *Operation, rec *OperationFinished) {
	prev := r.st.LastFinished
	r.st.LastFinished = FinishedOperation{Kind: op.Kind, Outcome: rec.Outcome}
	if rec.Error != nil {
		r.st.LastFinished.ErrorCode = rec.Error.Code
	}
	r.st.ContinuationOwed = op.Kind == OperationCompaction && rec.Outcome == OutcomeCompleted &&
		prev == FinishedOperation{Kind: OperationRun, Outcome: OutcomeFailed, ErrorCode: CodeContextLimit}
}

func (r *Reducer) checkCompleted(op *Operation, rec *OperationFinished) *Corruption {
	if op.AbortRequested {
		return corrupt(CorruptInvalidTransition, 0, "an aborting operation finishes aborted")
	}
	if op.Kind == OperationCompaction {
		switch {
		case rec.FinalEntryID != op.ResultEntryID:
			return corrupt(CorruptInvalidReference, 0, "a completed compaction's finalEntryId is its resultEntryId %s", op.ResultEntryID)
		case !op.CompactionEntryWritten:
			return corrupt(CorruptInvalidTransition, 0, "the compaction entry is not written yet")
		}
		return nil
	}
	if c := r.ref(rec.FinalEntryID, idAssistantEntry, op.OperationID, "finalEntryId"); c != nil {
		return c
	}
	want := StopReasonStop
	if rec.Completion == CompletionTruncated {
		want = StopReasonLength
	} else if rec.Completion != CompletionNormal {
		return corrupt(CorruptInvalidFact, 0, "unknown completion %q", rec.Completion)
	}
	a := op.Assistant
	switch {
	case a.EntryID != rec.FinalEntryID || op.Step.SettledEntryID != rec.FinalEntryID:
		return corrupt(CorruptInvalidTransition, 0, "finalEntryId %s is not the last reply", rec.FinalEntryID)
	case a.StopReason != want:
		return corrupt(CorruptInvalidTransition, 0, "a %s completion ends with a %s reply, not %s", rec.Completion, want, a.StopReason)
	}
	return nil
}
