package session

import (
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
)

// Members of a record object across all record types, in the JCS order
// of their names (the order a line is written in). Bit i is
// recordMembers[i]: each member's name, reader and writer are declared
// there once, and each record type's members once in its mask below, which
// both the decoder (exactly these) and the encoder (write these) use.
const (
	rArguments uint64 = 1 << iota
	rAssistantEntryID
	rAttempt
	rAttemptID
	rCompacted
	rCompletion
	rConfigDigest
	rSnapshot
	rContextThrough
	rEnv
	rError
	rFinalEntryID
	rInputEntryID
	rInputThrough
	rOperationID
	rOperationKind
	rOutcome
	rPhase
	rReason
	rReplay
	rReplayKey
	rResultEntryID
	rRetained
	rSourceDigest
	rStepID
	rStepKind
	rToolCallID
	rToolIndex
	rToolName
	rType

	rOp                = rType | rOperationID
	rRunStarted        = rOp | rOperationKind | rInputEntryID
	rCompactionStarted = rOp | rOperationKind | rInputThrough | rResultEntryID | rCompacted | rRetained | rSourceDigest
	rStepAttempt       = rOp | rStepID | rAttemptID | rStepKind | rAttempt | rContextThrough | rSnapshot | rConfigDigest
	rStepFailed        = rOp | rStepID | rAttemptID | rError
	rToolStarted       = rOp | rStepID | rAssistantEntryID | rToolIndex | rToolCallID | rToolName | rArguments | rReplay | rReplayKey | rResultEntryID | rEnv
	rAbortRequested    = rOp | rOperationKind | rPhase | rReason
	rFinished          = rOp | rOperationKind | rOutcome
)

// recordWire holds every member a record may have until its type is known
// (decoding), or the members of a typed record (encoding).
type recordWire struct {
	have                                          uint64
	typ, operationID, operationKind, inputEntryID string
	inputThrough, resultEntryID, sourceDigest     string
	compacted, retained                           []string
	stepID, attemptID, stepKind, contextThrough   string
	attempt                                       int64
	snapshot                                      ConfigurationSnapshot
	configDigest                                  string
	errInfo                                       ErrorInfo
	assistantEntryID, toolCallID, toolName        string
	toolIndex                                     int64
	arguments                                     jsontext.Value
	replay, replayKey, env, phase, reason         string
	outcome, completion, finalEntryID             string
}

// recordMember is one member a record object may have.
type recordMember = wireMember[recordWire]

// Readers and writers of the member kinds.
func uuidMember(name string, field func(w *recordWire) *string) recordMember {
	return stringMember(name, field, (*reader).uuid)
}

func symMember(name string, field func(w *recordWire) *string) recordMember {
	return stringMember(name, field, (*reader).sym)
}

func internedMember(name string, field func(w *recordWire) *string) recordMember {
	return stringMember(name, field, (*reader).interned)
}

func digestMember(name string, field func(w *recordWire) *string) recordMember {
	return stringMember(name, field, (*reader).digest)
}

func intMember(name string, field func(w *recordWire) *int64) recordMember {
	return recordMember{name,
		func(d *txDecoder, w *recordWire) (err error) { *field(w), err = d.rd.safeInt(name); return err },
		func(b []byte, w *recordWire) []byte { return appendInt(b, *field(w)) }}
}

func uuidsMember(name string, field func(w *recordWire) *[]string) recordMember {
	return recordMember{name,
		func(d *txDecoder, w *recordWire) (err error) {
			expect, keys := d.expectedIDs(name, w)
			*field(w), err = d.uuidsLike(name, expect, keys)
			return err
		},
		func(b []byte, w *recordWire) []byte { return appendStrings(b, *field(w)) }}
}

// expectedIDs is what an id array of a compactionStarted repeats when it
// is what the reducer expects: the history, split where compactedEntryIds
// ends. Nil when unknown.
// keys are the ids' keys when the decoder has them (histKeys).
func (d *txDecoder) expectedIDs(name string, w *recordWire) (ids []string, keys []idKey) {
	switch name {
	case "compactedEntryIds":
		ids = d.hist
	case "retainedEntryIds":
		if w.compacted != nil && len(w.compacted) <= len(d.hist) {
			ids = d.hist[len(w.compacted):]
		}
	}
	if ids != nil && len(d.histKeys) == len(d.hist) {
		keys = d.histKeys[len(d.hist)-len(ids):]
	}
	return ids, keys
}

// recordMembers is read-only: bit i of a mask is recordMembers[i].
var recordMembers = [...]recordMember{
	{"arguments",
		func(d *txDecoder, w *recordWire) (err error) {
			w.arguments, err = d.rd.rawObject("arguments")
			return err
		},
		func(b []byte, w *recordWire) []byte { return append(b, w.arguments...) }},
	uuidMember("assistantEntryId", func(w *recordWire) *string { return &w.assistantEntryID }),
	intMember("attempt", func(w *recordWire) *int64 { return &w.attempt }),
	uuidMember("attemptId", func(w *recordWire) *string { return &w.attemptID }),
	uuidsMember("compactedEntryIds", func(w *recordWire) *[]string { return &w.compacted }),
	symMember("completion", func(w *recordWire) *string { return &w.completion }),
	digestMember("configurationDigest", func(w *recordWire) *string { return &w.configDigest }),
	{"configurationSnapshot",
		func(d *txDecoder, w *recordWire) (err error) { w.snapshot, err = d.cachedSnapshot(); return err },
		func(b []byte, w *recordWire) []byte { return appendSnapshot(b, &w.snapshot) }},
	uuidMember("contextThroughEntryId", func(w *recordWire) *string { return &w.contextThrough }),
	internedMember("environmentIdentity", func(w *recordWire) *string { return &w.env }),
	{"error",
		func(d *txDecoder, w *recordWire) (err error) { w.errInfo, err = d.errorInfo(); return err },
		func(b []byte, w *recordWire) []byte { return appendError(b, &w.errInfo) }},
	uuidMember("finalEntryId", func(w *recordWire) *string { return &w.finalEntryID }),
	uuidMember("inputEntryId", func(w *recordWire) *string { return &w.inputEntryID }),
	uuidMember("inputThroughEntryId", func(w *recordWire) *string { return &w.inputThrough }),
	uuidMember("operationId", func(w *recordWire) *string { return &w.operationID }),
	symMember("operationKind", func(w *recordWire) *string { return &w.operationKind }),
	symMember("outcome", func(w *recordWire) *string { return &w.outcome }),
	symMember("phase", func(w *recordWire) *string { return &w.phase }),
	symMember("reason", func(w *recordWire) *string { return &w.reason }),
	symMember("replay", func(w *recordWire) *string { return &w.replay }),
	internedMember("replayKey", func(w *recordWire) *string { return &w.replayKey }),
	uuidMember("resultEntryId", func(w *recordWire) *string { return &w.resultEntryID }),
	uuidsMember("retainedEntryIds", func(w *recordWire) *[]string { return &w.retained }),
	digestMember("sourceDigest", func(w *recordWire) *string { return &w.sourceDigest }),
	uuidMember("stepId", func(w *recordWire) *string { return &w.stepID }),
	symMember("stepKind", func(w *recordWire) *string { return &w.stepKind }),
	internedMember("toolCallId", func(w *recordWire) *string { return &w.toolCallID }),
	intMember("toolIndex", func(w *recordWire) *int64 { return &w.toolIndex }),
	internedMember("toolName", func(w *recordWire) *string { return &w.toolName }),
	symMember("type", func(w *recordWire) *string { return &w.typ }),
}

func (d *txDecoder) record() (Record, error) {
	// The members are read into the decoder's own wire: the readers are
	// called through the table, so a local one would escape to the heap
	// for every record.
	d.rw = recordWire{}
	w := &d.rw
	if err := readMembers(d, "record", recordMembers[:], w, &w.have); err != nil {
		return nil, err
	}
	return w.build()
}

// appendRecord writes a record: its members, in JCS order.
func appendRecord(b []byte, r Record) ([]byte, error) {
	w, err := recordToWire(r)
	if err != nil {
		return b, err
	}
	return appendMembers(b, recordMembers[:], &w, w.have), nil
}

// recordToWire is build's inverse: the members of a typed record.
func recordToWire(r Record) (recordWire, error) {
	var w recordWire
	switch r := r.(type) {
	case *RunStarted:
		w = recordWire{have: rRunStarted, typ: "runStarted", operationID: r.OperationID,
			operationKind: string(OperationRun), inputEntryID: r.InputEntryID}
	case *CompactionStarted:
		w = recordWire{have: rCompactionStarted, typ: "compactionStarted", operationID: r.OperationID,
			operationKind: string(OperationCompaction), inputThrough: r.InputThroughEntryID,
			resultEntryID: r.ResultEntryID, compacted: r.CompactedEntryIDs, retained: r.RetainedEntryIDs,
			sourceDigest: r.SourceDigest}
	case *StepAttempt:
		w = recordWire{have: rStepAttempt, typ: "stepAttempt", operationID: r.OperationID,
			stepID: r.StepID, attemptID: r.AttemptID, stepKind: string(r.StepKind), attempt: int64(r.Attempt),
			contextThrough: r.ContextThroughEntryID, snapshot: r.ConfigurationSnapshot,
			configDigest: r.ConfigurationDigest}
	case *StepFailed:
		w = recordWire{have: rStepFailed, typ: "stepFailed", operationID: r.OperationID,
			stepID: r.StepID, attemptID: r.AttemptID, errInfo: r.Error}
	case *ToolStarted:
		args, err := canonicalize(r.Arguments)
		if err != nil {
			return w, fmt.Errorf("toolStarted arguments: %w", err)
		}
		w = recordWire{have: rToolStarted, typ: "toolStarted", operationID: r.OperationID,
			stepID: r.StepID, assistantEntryID: r.AssistantEntryID, toolIndex: int64(r.ToolIndex),
			toolCallID: r.ToolCallID, toolName: r.ToolName, arguments: args, replay: r.Replay,
			replayKey: r.ReplayKey, env: r.EnvironmentIdentity, resultEntryID: r.ResultEntryID}
	case *AbortRequested:
		w = recordWire{have: rAbortRequested, typ: "abortRequested", operationID: r.OperationID,
			operationKind: string(r.OperationKind), phase: string(r.Phase), reason: r.Reason,
			toolCallID: r.ToolCallID}
		if r.ToolCallID != "" {
			w.have |= rToolCallID
		}
	case *OperationFinished:
		w = recordWire{have: rFinished, typ: "operationFinished", operationID: r.OperationID,
			operationKind: string(r.OperationKind), outcome: string(r.Outcome),
			completion: string(r.Completion), finalEntryID: r.FinalEntryID}
		if r.Completion != "" {
			w.have |= rCompletion
		}
		if r.FinalEntryID != "" {
			w.have |= rFinalEntryID
		}
		if r.Error != nil {
			w.have |= rError
			w.errInfo = *r.Error
		}
	default:
		return w, fmt.Errorf("unknown record type %T", r)
	}
	return w, nil
}

func (w *recordWire) exactly(mask uint64, typ string) error {
	if w.have != mask {
		return shapeErr(fmt.Sprintf("%s has members that do not belong to it or lacks required ones", typ))
	}
	return nil
}

// build turns the members into the record of w.typ.
func (w *recordWire) build() (Record, error) {
	switch w.typ {
	case "runStarted":
		if err := w.exactly(rRunStarted, w.typ); err != nil {
			return nil, err
		}
		if w.operationKind != string(OperationRun) {
			return nil, shapeErr(`runStarted has operationKind "run"`)
		}
		return &RunStarted{OperationID: w.operationID, InputEntryID: w.inputEntryID}, nil
	case "compactionStarted":
		return w.compactionStarted()
	case "stepAttempt":
		return w.stepAttempt()
	case "stepFailed":
		if err := w.exactly(rStepFailed, w.typ); err != nil {
			return nil, err
		}
		return &StepFailed{OperationID: w.operationID, StepID: w.stepID, AttemptID: w.attemptID, Error: w.errInfo}, nil
	case "toolStarted":
		return w.toolStarted()
	case "abortRequested":
		return w.abortRequested()
	case "operationFinished":
		return w.finished()
	}
	return nil, shapeErr(fmt.Sprintf("unknown record type %q", w.typ))
}

func (w *recordWire) compactionStarted() (Record, error) {
	if err := w.exactly(rCompactionStarted, w.typ); err != nil {
		return nil, err
	}
	if w.operationKind != string(OperationCompaction) {
		return nil, shapeErr(`compactionStarted has operationKind "compaction"`)
	}
	if len(w.compacted) == 0 {
		return nil, shapeErr("compactedEntryIds must not be empty")
	}
	return &CompactionStarted{
		OperationID:         w.operationID,
		InputThroughEntryID: w.inputThrough,
		ResultEntryID:       w.resultEntryID,
		CompactedEntryIDs:   w.compacted,
		RetainedEntryIDs:    w.retained,
		SourceDigest:        w.sourceDigest,
	}, nil
}

func (w *recordWire) stepAttempt() (Record, error) {
	if err := w.exactly(rStepAttempt, w.typ); err != nil {
		return nil, err
	}
	if k := StepKind(w.stepKind); k != StepAssistant && k != StepCompaction {
		return nil, shapeErr(fmt.Sprintf("unknown stepKind %q", w.stepKind))
	}
	if w.attempt != 1 && w.attempt != 2 {
		return nil, shapeErr("attempt is 1 or 2")
	}
	return &StepAttempt{
		OperationID:           w.operationID,
		StepID:                w.stepID,
		AttemptID:             w.attemptID,
		StepKind:              StepKind(w.stepKind),
		Attempt:               int(w.attempt),
		ContextThroughEntryID: w.contextThrough,
		ConfigurationSnapshot: w.snapshot,
		ConfigurationDigest:   w.configDigest,
	}, nil
}

func (w *recordWire) toolStarted() (Record, error) {
	if err := w.exactly(rToolStarted, w.typ); err != nil {
		return nil, err
	}
	if w.replay != "safe" && w.replay != "never" {
		return nil, shapeErr(`replay is "safe" or "never"`)
	}
	return &ToolStarted{
		OperationID:         w.operationID,
		StepID:              w.stepID,
		AssistantEntryID:    w.assistantEntryID,
		ToolIndex:           int(w.toolIndex),
		ToolCallID:          w.toolCallID,
		ToolName:            w.toolName,
		Arguments:           w.arguments,
		Replay:              w.replay,
		ReplayKey:           w.replayKey,
		EnvironmentIdentity: w.env,
		ResultEntryID:       w.resultEntryID,
	}, nil
}

func (w *recordWire) abortRequested() (Record, error) {
	// toolCallId is there exactly for phase tool (session.md §3.2).
	want := rAbortRequested
	if w.phase == string(PhaseTool) {
		want |= rToolCallID
	}
	if err := w.exactly(want, w.typ); err != nil {
		return nil, err
	}
	if k := OperationKind(w.operationKind); k != OperationRun && k != OperationCompaction {
		return nil, shapeErr(fmt.Sprintf("unknown operationKind %q", w.operationKind))
	}
	if p := Phase(w.phase); p != PhaseModel && p != PhaseTool && p != PhaseCompact {
		return nil, shapeErr(fmt.Sprintf("unknown phase %q", w.phase))
	}
	if w.reason != AbortReasonEscape {
		return nil, shapeErr(`abortRequested reason is "escape"`)
	}
	return &AbortRequested{
		OperationID:   w.operationID,
		OperationKind: OperationKind(w.operationKind),
		Phase:         Phase(w.phase),
		ToolCallID:    w.toolCallID,
		Reason:        w.reason,
	}, nil
}

func (w *recordWire) finished() (Record, error) {
	kind := OperationKind(w.operationKind)
	if kind != OperationRun && kind != OperationCompaction {
		return nil, shapeErr(fmt.Sprintf("unknown operationKind %q", w.operationKind))
	}
	r := &OperationFinished{OperationID: w.operationID, OperationKind: kind, Outcome: Outcome(w.outcome)}
	var want uint64
	switch r.Outcome {
	case OutcomeCompleted:
		want = rFinished | rFinalEntryID
		if kind == OperationRun {
			want |= rCompletion
			r.Completion = Completion(w.completion)
			if r.Completion != CompletionNormal && r.Completion != CompletionTruncated {
				return nil, shapeErr(`a completed run has completion "normal" or "truncated"`)
			}
		}
		r.FinalEntryID = w.finalEntryID
	case OutcomeAborted:
		want = rFinished
	case OutcomeFailed:
		want = rFinished | rError
		e := w.errInfo
		r.Error = &e
	default:
		return nil, shapeErr(fmt.Sprintf("unknown outcome %q", w.outcome))
	}
	if err := w.exactly(want, "operationFinished"); err != nil {
		return nil, err
	}
	return r, nil
}

// snapshot reads a closed configuration snapshot.
func (d *txDecoder) snapshot() (ConfigurationSnapshot, error) {
	rd := &d.rd
	var c ConfigurationSnapshot
	var have uint
	err := rd.members("configurationSnapshot", func(name []byte) (err error) {
		switch string(name) {
		case "model":
			member(rd, &have, 1)
			c.Model, err = rd.interned("snapshot model")
		case "systemPromptDigest":
			member(rd, &have, 2)
			c.SystemPromptDigest, err = rd.digest("systemPromptDigest")
		case "tools":
			member(rd, &have, 4)
			c.Tools, err = d.configTools()
		case "adapterIdentity":
			member(rd, &have, 8)
			c.AdapterIdentity, err = rd.interned("adapterIdentity")
		case "routingIdentity":
			member(rd, &have, 16)
			c.RoutingIdentity, err = rd.interned("routingIdentity")
		case "outputOptionsDigest":
			member(rd, &have, 32)
			c.OutputOptionsDigest, err = rd.digest("outputOptionsDigest")
		default:
			return shapeErr(fmt.Sprintf("unknown configurationSnapshot member %q", name))
		}
		return err
	})
	if err != nil {
		return c, err
	}
	if have != 63 {
		return c, shapeErr("configurationSnapshot lacks a required member")
	}
	return c, nil
}

func (d *txDecoder) configTools() ([]ConfigurationTool, error) {
	rd := &d.rd
	tools := []ConfigurationTool{}
	err := rd.elements("tools", func() error {
		var (
			t    ConfigurationTool
			have uint
		)
		err := rd.members("a configuration tool", func(name []byte) (err error) {
			switch string(name) {
			case "name":
				member(rd, &have, 1)
				t.Name, err = rd.interned("tool name")
			case "definitionDigest":
				member(rd, &have, 2)
				t.DefinitionDigest, err = rd.digest("definitionDigest")
			default:
				return shapeErr(fmt.Sprintf("unknown configuration tool member %q", name))
			}
			return err
		})
		if err != nil {
			return err
		}
		if have != 3 {
			return shapeErr("a configuration tool has exactly name and definitionDigest")
		}
		tools = append(tools, t)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return tools, nil
}
