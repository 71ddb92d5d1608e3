package session

import (
	"fmt"

	"github.com/go-json-experiment/json/jsontext"
)

// Members of a record object, across all record types.
const (
	rType uint64 = 1 << iota
	rOperationID
	rOperationKind
	rInputEntryID
	rInputThrough
	rResultEntryID
	rCompacted
	rRetained
	rSourceDigest
	rStepID
	rAttemptID
	rStepKind
	rAttempt
	rContextThrough
	rSnapshot
	rConfigDigest
	rError
	rAssistantEntryID
	rToolIndex
	rToolCallID
	rToolName
	rArguments
	rReplay
	rReplayKey
	rEnv
	rPhase
	rReason
	rOutcome
	rCompletion
	rFinalEntryID

	rOp                = rType | rOperationID
	rRunStarted        = rOp | rOperationKind | rInputEntryID
	rCompactionStarted = rOp | rOperationKind | rInputThrough | rResultEntryID | rCompacted | rRetained | rSourceDigest
	rStepAttempt       = rOp | rStepID | rAttemptID | rStepKind | rAttempt | rContextThrough | rSnapshot | rConfigDigest
	rStepFailed        = rOp | rStepID | rAttemptID | rError
	rToolStarted       = rOp | rStepID | rAssistantEntryID | rToolIndex | rToolCallID | rToolName | rArguments | rReplay | rReplayKey | rResultEntryID | rEnv
	rAbortRequested    = rOp | rOperationKind | rPhase | rReason
	rFinished          = rOp | rOperationKind | rOutcome
)

// recordWire holds every member a record may have until its type is known.
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

func (d *txDecoder) record() (Record, error) {
	rd := &d.rd
	var w recordWire
	err := rd.members("record", func(name []byte) (err error) {
		var bit uint64
		switch string(name) {
		case "type":
			bit = rType
			w.typ, err = rd.sym("record type")
		case "operationId":
			bit = rOperationID
			w.operationID, err = rd.uuid("operationId")
		case "operationKind":
			bit = rOperationKind
			w.operationKind, err = rd.sym("operationKind")
		case "inputEntryId":
			bit = rInputEntryID
			w.inputEntryID, err = rd.uuid("inputEntryId")
		case "inputThroughEntryId":
			bit = rInputThrough
			w.inputThrough, err = rd.uuid("inputThroughEntryId")
		case "resultEntryId":
			bit = rResultEntryID
			w.resultEntryID, err = rd.uuid("resultEntryId")
		case "compactedEntryIds":
			bit = rCompacted
			w.compacted, err = d.uuids("compactedEntryIds")
		case "retainedEntryIds":
			bit = rRetained
			w.retained, err = d.uuids("retainedEntryIds")
		case "sourceDigest":
			bit = rSourceDigest
			w.sourceDigest, err = rd.digest("sourceDigest")
		case "stepId":
			bit = rStepID
			w.stepID, err = rd.uuid("stepId")
		case "attemptId":
			bit = rAttemptID
			w.attemptID, err = rd.uuid("attemptId")
		case "stepKind":
			bit = rStepKind
			w.stepKind, err = rd.sym("stepKind")
		case "attempt":
			bit = rAttempt
			w.attempt, err = rd.safeInt("attempt")
		case "contextThroughEntryId":
			bit = rContextThrough
			w.contextThrough, err = rd.uuid("contextThroughEntryId")
		case "configurationSnapshot":
			bit = rSnapshot
			w.snapshot, err = d.cachedSnapshot()
		case "configurationDigest":
			bit = rConfigDigest
			w.configDigest, err = rd.digest("configurationDigest")
		case "error":
			bit = rError
			w.errInfo, err = d.errorInfo()
		case "assistantEntryId":
			bit = rAssistantEntryID
			w.assistantEntryID, err = rd.uuid("assistantEntryId")
		case "toolIndex":
			bit = rToolIndex
			w.toolIndex, err = rd.safeInt("toolIndex")
		case "toolCallId":
			bit = rToolCallID
			w.toolCallID, err = rd.interned("toolCallId")
		case "toolName":
			bit = rToolName
			w.toolName, err = rd.interned("toolName")
		case "arguments":
			bit = rArguments
			w.arguments, err = rd.rawObject("arguments")
		case "replay":
			bit = rReplay
			w.replay, err = rd.sym("replay")
		case "replayKey":
			bit = rReplayKey
			w.replayKey, err = rd.interned("replayKey")
		case "environmentIdentity":
			bit = rEnv
			w.env, err = rd.interned("environmentIdentity")
		case "phase":
			bit = rPhase
			w.phase, err = rd.sym("phase")
		case "reason":
			bit = rReason
			w.reason, err = rd.sym("reason")
		case "outcome":
			bit = rOutcome
			w.outcome, err = rd.sym("outcome")
		case "completion":
			bit = rCompletion
			w.completion, err = rd.sym("completion")
		case "finalEntryId":
			bit = rFinalEntryID
			w.finalEntryID, err = rd.uuid("finalEntryId")
		default:
			return shapeErr(fmt.Sprintf("unknown record member %q", name))
		}
		if err != nil {
			return err
		}
		member(rd, &w.have, bit)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return w.build()
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
	case "stepAttempt":
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
	case "stepFailed":
		if err := w.exactly(rStepFailed, w.typ); err != nil {
			return nil, err
		}
		return &StepFailed{OperationID: w.operationID, StepID: w.stepID, AttemptID: w.attemptID, Error: w.errInfo}, nil
	case "toolStarted":
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
	case "abortRequested":
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
	case "operationFinished":
		return w.finished()
	}
	return nil, shapeErr(fmt.Sprintf("unknown record type %q", w.typ))
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
