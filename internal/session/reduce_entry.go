package session

import (
	"slices"
	"strings"
)

// CompactedHistoryPrefix starts the user message that stands for the
// compacted history in the active context.
const CompactedHistoryPrefix = "[Compacted history]\n"

func (r *Reducer) applyEntry(f *Fact, provisioned bool) *Corruption {
	if provisioned {
		switch f.Entry.(type) {
		case *ToolResultEntry, *CompactionEntry:
		default:
			return corrupt(CorruptDuplicateID, 0, "fact id %s is a provisioned result entry id", f.ID)
		}
	}
	switch e := f.Entry.(type) {
	case *UserEntry:
		return r.applyUser(f.ID, e)
	case *AssistantEntry:
		return r.applyAssistant(f.ID, e)
	case *ToolResultEntry:
		return r.applyToolResult(f.ID, e)
	case *SyntheticEntry:
		return r.applySynthetic(f.ID, e)
	case *CompactionEntry:
		return r.applyCompaction(f.ID, e)
	}
	return corrupt(CorruptInvalidFact, 0, "unknown entry type %T", f.Entry)
}

func (r *Reducer) applyUser(id string, e *UserEntry) *Corruption {
	if e.Content == "" {
		return corrupt(CorruptInvalidFact, 0, "a user message has content")
	}
	if r.st.Operation != nil {
		return corrupt(CorruptInvalidTransition, 0, "a user entry needs an idle session; operation %s is open", r.st.Operation.OperationID)
	}
	r.newID(id, idUserEntry, "")
	r.appendMessage(id, Message{Role: RoleUser, Content: r.contents.ptr(e.Content)})
	return nil
}

func (r *Reducer) applyAssistant(id string, e *AssistantEntry) *Corruption {
	switch e.StopReason {
	case StopReasonStop, StopReasonToolUse, StopReasonLength:
	default:
		return corrupt(CorruptInvalidFact, 0, "unknown stopReason %q", e.StopReason)
	}
	info, ok := r.ids.get(e.AttemptID)
	if !ok || info.kind != idAttempt {
		return corrupt(CorruptInvalidReference, 0, "assistant entry names unknown attempt %s", e.AttemptID)
	}
	op := r.st.Operation
	if op == nil || info.op != r.ids.opRef(op.OperationID) {
		return corrupt(CorruptInvalidReference, 0, "attempt %s does not belong to the open operation", e.AttemptID)
	}
	step := op.Step
	switch {
	case step.AttemptID != e.AttemptID || step.Status != StepAttempting:
		return corrupt(CorruptInvalidTransition, 0, "attempt %s is closed", e.AttemptID)
	case step.StepKind != StepAssistant:
		return corrupt(CorruptInvalidTransition, 0, "attempt %s is a %s step", e.AttemptID, step.StepKind)
	case e.StepID != step.StepID:
		return corrupt(CorruptInvalidReference, 0, "attempt %s belongs to step %s, not %s", e.AttemptID, step.StepID, e.StepID)
	case op.AbortRequested:
		return corrupt(CorruptInvalidTransition, 0, "operation %s is aborting; a late reply is discarded", op.OperationID)
	}
	if c := checkAssistantMessage(e); c != nil {
		return c
	}

	op = r.mutStep()
	op.Step.Status = StepSettled
	op.Step.SettledEntryID = id
	op.Step.StopReason = e.StopReason
	a := AssistantState{EntryID: id, StepID: e.StepID, StopReason: e.StopReason, ToolCalls: e.ToolCalls}
	if r.loading && r.tx.fresh.assistant && r.tx.fresh.tools && op.Assistant != nil {
		// While loading, fresh parts are nobody else's: reuse them.
		a.Calls = append(op.Assistant.Calls[:0], make([]CallState, len(e.ToolCalls))...)
		*op.Assistant = a
		op.ToolCalls = op.ToolCalls[:0]
	} else {
		a.Calls = make([]CallState, len(e.ToolCalls))
		op.Assistant = &a
		op.ToolCalls = nil
	}
	r.tx.fresh.assistant, r.tx.fresh.tools = true, true
	r.newID(id, idAssistantEntry, op.OperationID)
	var content *string
	if e.Content != nil {
		content = r.contents.ptr(*e.Content)
	}
	r.appendMessage(id, Message{Role: RoleAssistant, Content: content, ToolCalls: e.ToolCalls})
	return nil
}

// checkAssistantMessage checks what makes a settled reply a legal provider
// message: text or calls, calls exactly for toolUse, non-empty text for a
// final stop, distinct call ids.
func checkAssistantMessage(e *AssistantEntry) *Corruption {
	calls := len(e.ToolCalls)
	switch {
	case e.Content == nil && calls == 0:
		return corrupt(CorruptInvalidTranscript, 0, "an assistant message has content or tool calls")
	case e.StopReason == StopReasonToolUse && calls == 0:
		return corrupt(CorruptInvalidTranscript, 0, "a toolUse reply has tool calls")
	case e.StopReason == StopReasonStop && calls > 0:
		return corrupt(CorruptInvalidTranscript, 0, "a stop reply has no tool calls")
	case e.StopReason == StopReasonStop && (e.Content == nil || *e.Content == ""):
		return corrupt(CorruptInvalidTranscript, 0, "a stop reply has non-empty content")
	}
	for i, c := range e.ToolCalls {
		if c.ID == "" || c.Type != "function" || c.Function.Name == "" {
			return corrupt(CorruptInvalidFact, 0, "tool call %d lacks an id, type function or a name", i)
		}
		for _, d := range e.ToolCalls[:i] {
			if d.ID == c.ID {
				return corrupt(CorruptInvalidTranscript, 0, "tool call id %q is used twice in one message", c.ID)
			}
		}
	}
	return nil
}

// applyToolResult applies the result entry of a started tool.
func (r *Reducer) applyToolResult(id string, e *ToolResultEntry) *Corruption {
	switch e.Result {
	case ResultSuccess, ResultError, ResultInterrupted:
	default:
		return corrupt(CorruptInvalidFact, 0, "unknown tool result type %q", e.Result)
	}
	info, ok := r.ids.get(e.ToolStartedID)
	if !ok || info.kind != idToolStarted {
		return corrupt(CorruptInvalidReference, 0, "result names unknown toolStarted %s", e.ToolStartedID)
	}
	op := r.st.Operation
	if op == nil || info.op != r.ids.opRef(op.OperationID) {
		return corrupt(CorruptInvalidReference, 0, "toolStarted %s does not belong to the open operation", e.ToolStartedID)
	}
	i := slices.IndexFunc(op.ToolCalls, func(t ToolState) bool { return t.ToolStartedID == e.ToolStartedID })
	if i < 0 {
		return corrupt(CorruptInvalidTransition, 0, "toolStarted %s belongs to an earlier step", e.ToolStartedID)
	}
	ts := &op.ToolCalls[i]
	switch {
	case ts.Status != ToolPending:
		return corrupt(CorruptInvalidTransition, 0, "tool %s already has a result", e.ToolStartedID)
	case id != ts.ResultEntryID:
		return corrupt(CorruptInvalidReference, 0, "result entry id %s is not the provisioned %s", id, ts.ResultEntryID)
	case e.StepID != ts.StepID || e.ToolCallID != ts.ToolCallID || e.ToolName != ts.ToolName:
		return corrupt(CorruptInvalidReference, 0, "result does not match the step, call id or name of toolStarted %s", e.ToolStartedID)
	case op.AbortRequested && e.Result != ResultInterrupted:
		return corrupt(CorruptInvalidTransition, 0, "operation %s is aborting; a late tool result is discarded", op.OperationID)
	case e.Result == ResultInterrupted && e.Content != ContentInterrupted:
		return corrupt(CorruptInvalidTranscript, 0, "an interrupted result has the fixed content")
	}

	r.mutTools()
	op = r.mutAssistant()
	ts = &op.ToolCalls[i]
	ts.Status = ToolCompleted
	call := &op.Assistant.Calls[ts.ToolIndex]
	call.Answered = true
	call.ResultEntryID = id
	r.setID(id, idToolEntry, op.OperationID)
	r.appendMessage(id, Message{Role: RoleTool, Content: r.contents.ptr(e.Content), ToolCallID: e.ToolCallID})
	return nil
}

// applySynthetic applies a pre-execution synthetic result.
func (r *Reducer) applySynthetic(id string, e *SyntheticEntry) *Corruption {
	content := SyntheticContent(e.Reason)
	if content == "" {
		return corrupt(CorruptInvalidFact, 0, "unknown synthetic reason %q", e.Reason)
	}
	info, ok := r.ids.get(e.AssistantEntryID)
	if !ok || info.kind != idAssistantEntry {
		return corrupt(CorruptInvalidReference, 0, "synthetic result names unknown assistant entry %s", e.AssistantEntryID)
	}
	op := r.st.Operation
	if op == nil || info.op != r.ids.opRef(op.OperationID) {
		return corrupt(CorruptInvalidReference, 0, "assistant entry %s does not belong to the open operation", e.AssistantEntryID)
	}
	a := op.Assistant
	if a.EntryID != e.AssistantEntryID {
		return corrupt(CorruptInvalidTransition, 0, "assistant entry %s is not the current one", e.AssistantEntryID)
	}
	if e.ToolIndex < 0 || e.ToolIndex >= len(a.ToolCalls) {
		return corrupt(CorruptInvalidReference, 0, "assistant entry %s has no tool call %d", e.AssistantEntryID, e.ToolIndex)
	}
	call := a.ToolCalls[e.ToolIndex]
	switch cs := a.Calls[e.ToolIndex]; {
	case e.StepID != a.StepID || e.ToolCallID != call.ID || e.ToolName != call.Function.Name:
		return corrupt(CorruptInvalidReference, 0, "synthetic result does not match the step, call id or name of call %d", e.ToolIndex)
	case cs.ToolStartedID != "":
		return corrupt(CorruptInvalidTransition, 0, "call %d was started; its result names the toolStarted", e.ToolIndex)
	case cs.Answered:
		return corrupt(CorruptInvalidTransition, 0, "call %d already has a result", e.ToolIndex)
	}
	// The fixed content is checked first (as the reference runtimes do):
	// a result with the wrong text is not a legal transcript, whatever its
	// reason. Then: a length reply's calls are truncated, never run or
	// judged; other replies' calls are never truncated. Abort beats both.
	truncated := a.StopReason == StopReasonLength
	switch {
	case e.Content != content:
		return corrupt(CorruptInvalidTranscript, 0, "a %s result has the fixed content", e.Reason)
	case op.AbortRequested && e.Reason != ReasonAborted:
		return corrupt(CorruptInvalidTransition, 0, "operation %s is aborting; unanswered calls are aborted", op.OperationID)
	case e.Reason == ReasonTruncated && !truncated:
		return corrupt(CorruptInvalidTransition, 0, "only the calls of a length reply are truncated")
	case truncated && e.Reason != ReasonTruncated && e.Reason != ReasonAborted:
		return corrupt(CorruptInvalidTransition, 0, "the calls of a length reply are truncated")
	}

	op = r.mutAssistant()
	cs := &op.Assistant.Calls[e.ToolIndex]
	cs.Answered = true
	cs.ResultEntryID = id
	r.newID(id, idToolEntry, op.OperationID)
	r.appendMessage(id, Message{Role: RoleTool, Content: r.contents.ptr(e.Content), ToolCallID: e.ToolCallID})
	return nil
}

// applyCompaction applies the compaction entry: it settles the compaction
// step and rewrites the active context to the summary plus retained tail.
func (r *Reducer) applyCompaction(id string, e *CompactionEntry) *Corruption {
	op := r.st.Operation
	if op == nil || op.OperationID != e.OperationID || op.Kind != OperationCompaction {
		if info, ok := r.ids.get(e.OperationID); !ok || info.kind != idOperation {
			return corrupt(CorruptInvalidReference, 0, "compaction entry names unknown operation %s", e.OperationID)
		}
		return corrupt(CorruptInvalidReference, 0, "compaction entry for %s, which is not the open compaction", e.OperationID)
	}
	if id != op.ResultEntryID {
		return corrupt(CorruptInvalidReference, 0, "compaction entry id %s is not the provisioned %s", id, op.ResultEntryID)
	}
	step := op.Step
	switch {
	case step == nil || step.Status != StepAttempting:
		return corrupt(CorruptInvalidTransition, 0, "a compaction entry settles an open compaction attempt")
	case op.AbortRequested:
		return corrupt(CorruptInvalidTransition, 0, "operation %s is aborting; a late summary is discarded", op.OperationID)
	}
	cs := op.Compaction
	if e.CompactedThroughEntryID != cs.CompactedEntryIDs[len(cs.CompactedEntryIDs)-1] {
		return corrupt(CorruptInvalidReference, 0, "compactedThroughEntryId is not the last compacted entry")
	}
	// Nothing is appended while a compaction is open, so the retained
	// entries are still the tail of the transcript (a writer may retain
	// more than the active context holds).
	tailMsgs := r.transcript[len(r.transcript)-len(cs.RetainedEntryIDs):]
	if len(e.RetainedTail) != len(cs.RetainedEntryIDs) {
		return corrupt(CorruptInvalidReference, 0, "retainedTail has %d messages, retainedEntryIds %d", len(e.RetainedTail), len(cs.RetainedEntryIDs))
	}
	if len(r.transcript)-len(tailMsgs) < r.released {
		r.needText = true // the text to compare was dropped
		return corrupt(CorruptInvalidReference, 0, "a retained message's text was released")
	}
	for i := range e.RetainedTail {
		rm := &e.RetainedTail[i]
		if rm.SourceEntryID != cs.RetainedEntryIDs[i] || !equalMessage(&rm.Message, &tailMsgs[i]) {
			return corrupt(CorruptInvalidReference, 0, "retained message %d is not source entry %s", i, cs.RetainedEntryIDs[i])
		}
	}
	summary := CompactedHistoryPrefix + e.Summary
	active := make([]Message, 0, 1+len(tailMsgs)+16)
	active = append(active, Message{Role: RoleUser, Content: &summary})
	active = append(active, tailMsgs...)
	if !legalTranscript(active) {
		return corrupt(CorruptInvalidTranscript, 0, "the compacted context is not a legal provider transcript")
	}
	activeIDs := make([]string, 0, cap(active))
	activeIDs = append(activeIDs, "")
	activeIDs = append(activeIDs, cs.RetainedEntryIDs...)

	op = r.mutStep()
	op.Step.Status = StepSettled
	op.Step.SettledEntryID = id
	op.CompactionEntryWritten = true
	r.setID(id, idCompactionEntry, op.OperationID)
	r.active = active
	r.activeIDs = activeIDs
	r.activeFrom = len(r.transcript)
	if r.release && r.loading {
		r.releaseText(len(r.transcript) - len(tailMsgs))
	}
	return nil
}

// releaseText drops the assistant and tool text of Transcript[:n], which a
// compaction summarized: the running history hash has passed them
// (compactionStarted hashed every message) and no snapshot shares them
// while loading, so they are changed in place. What stays is copied out
// of the decoder's arena chunks, so that those chunks, mostly the
// released text, can be freed.
func (r *Reducer) releaseText(n int) {
	for i := r.released; i < n; i++ {
		m := &r.transcript[i]
		m.ToolCallID = strings.Clone(m.ToolCallID)
		if m.Role == RoleUser {
			// Rewind and the session list name turns by their prompt.
			*m.Content = strings.Clone(*m.Content)
			continue
		}
		if m.Content != nil {
			*m.Content = "" // the slab's slot, which only m points at
			m.Content = nil
		}
		for j := range m.ToolCalls {
			c := &m.ToolCalls[j]
			c.ID, c.Function.Arguments = strings.Clone(c.ID), ""
			c.Function.Name = r.keptName(c.Function.Name)
		}
	}
	r.released = max(r.released, n)
}

// keptName is a copy of a released call's tool name, one per name.
func (r *Reducer) keptName(s string) string {
	if k, ok := r.names[s]; ok {
		return k
	}
	if r.names == nil {
		r.names = map[string]string{}
	}
	k := strings.Clone(s)
	r.names[k] = k
	return k
}

// legalTranscript reports whether msgs is a context a provider accepts:
// every tool message answers a call of the assistant message it follows,
// and every call is answered before the next non-tool message and by the
// end.
func legalTranscript(msgs []Message) bool {
	var pending []string
	for i := range msgs {
		m := &msgs[i]
		if m.Role == RoleTool {
			j := slices.Index(pending, m.ToolCallID)
			if j < 0 {
				return false
			}
			pending = slices.Delete(pending, j, j+1)
			continue
		}
		if len(pending) > 0 {
			return false
		}
		for _, c := range m.ToolCalls {
			pending = append(pending, c.ID)
		}
	}
	return len(pending) == 0
}

func equalMessage(a, b *Message) bool {
	if a.Role != b.Role || a.ToolCallID != b.ToolCallID || (a.Content == nil) != (b.Content == nil) {
		return false
	}
	if a.Content != nil && *a.Content != *b.Content {
		return false
	}
	return slices.Equal(a.ToolCalls, b.ToolCalls)
}
