package session

import (
	"bytes"
	"fmt"
	"io"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// MarshalState prints s with exactly the fields of expected-state.schema.json
// (the helper fields of State are not printed).
func MarshalState(s *State) ([]byte, error) {
	b, err := json.Marshal(stateOut(s))
	if err != nil {
		return nil, fmt.Errorf("marshal state: %w", err)
	}
	return b, nil
}

// MarshalResult prints a reduction's outcome as a golden fixture
// expectation: {"ok":true,"state":...} or
// {"ok":false,"error":{"code","line"[,"seq"]}}.
func MarshalResult(s *State, c *Corruption) ([]byte, error) {
	var b bytes.Buffer
	if err := WriteResult(&b, s, c); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// WriteResult writes what MarshalResult returns to w, without building it
// in memory first (a whole transcript is as long as its text).
func WriteResult(w io.Writer, s *State, c *Corruption) error {
	if c == nil && s != nil {
		return writeState(w, s)
	}
	return writeResultReflect(w, s, c)
}

// writeResultReflect is WriteResult through json's reflection: the
// reference that writeState's output is tested against.
func writeResultReflect(w io.Writer, s *State, c *Corruption) error {
	var v any
	if c != nil {
		v = struct {
			OK    bool         `json:"ok"`
			Error corruptionJS `json:"error"`
		}{false, corruptionJS{c.Code, c.Line, c.Seq}}
	} else {
		if s == nil {
			return fmt.Errorf("marshal result: no state and no corruption")
		}
		v = struct {
			OK    bool    `json:"ok"`
			State stateJS `json:"state"`
		}{true, stateOut(s)}
	}
	if err := json.MarshalWrite(w, v); err != nil {
		return fmt.Errorf("marshal result: %w", err)
	}
	return nil
}

type corruptionJS struct {
	Code string `json:"code"`
	Line int    `json:"line"`
	Seq  int64  `json:"seq,omitzero"`
}

type stateJS struct {
	Header         headerJS    `json:"header"`
	Transcript     []Message   `json:"transcript"`
	ActiveContext  []Message   `json:"activeContext"`
	Usage          Usage       `json:"usage"`
	Operation      operationJS `json:"operation"`
	RepairedLength int64       `json:"repairedLength"`
}

type headerJS struct {
	ID                  string `json:"id"`
	CreatedAt           int64  `json:"createdAt"`
	Cwd                 string `json:"cwd"`
	Provider            string `json:"provider"`
	Model               string `json:"model"`
	EnvironmentIdentity string `json:"environmentIdentity"`
}

// operationJS is {kind:"idle"}, a run (always with toolCalls) or a
// compaction (never with toolCalls); step only once there is one.
type operationJS struct {
	Kind                string         `json:"kind"`
	OperationID         string         `json:"operationId,omitempty"`
	InputEntryID        string         `json:"inputEntryId,omitempty"`
	InputThroughEntryID string         `json:"inputThroughEntryId,omitempty"`
	ResultEntryID       string         `json:"resultEntryId,omitempty"`
	ToolCalls           *[]toolStateJS `json:"toolCalls,omitzero"`
	AbortRequested      *bool          `json:"abortRequested,omitzero"`
	Step                *stepJS        `json:"step,omitzero"`
}

type stepJS struct {
	OperationID           string                `json:"operationId"`
	StepID                string                `json:"stepId"`
	AttemptID             string                `json:"attemptId"`
	Attempt               int                   `json:"attempt"`
	StepKind              StepKind              `json:"stepKind"`
	Status                StepStatus            `json:"status"`
	ContextThroughEntryID string                `json:"contextThroughEntryId"`
	ConfigurationSnapshot ConfigurationSnapshot `json:"configurationSnapshot"`
	ConfigurationDigest   string                `json:"configurationDigest"`
	SettledEntryID        string                `json:"settledEntryId,omitempty"`
	StopReason            StopReason            `json:"stopReason,omitempty"`
}

type toolStateJS struct {
	OperationID         string         `json:"operationId"`
	ToolStartedID       string         `json:"toolStartedId"`
	StepID              string         `json:"stepId"`
	AssistantEntryID    string         `json:"assistantEntryId"`
	ToolIndex           int            `json:"toolIndex"`
	ToolCallID          string         `json:"toolCallId"`
	ToolName            string         `json:"toolName"`
	Arguments           jsontext.Value `json:"arguments"`
	Replay              string         `json:"replay"`
	ReplayKey           string         `json:"replayKey"`
	EnvironmentIdentity string         `json:"environmentIdentity"`
	ResultEntryID       string         `json:"resultEntryId"`
	Status              ToolStatus     `json:"status"`
}

func stateOut(s *State) stateJS {
	h := s.Header
	return stateJS{
		Header:         headerJS(h),
		Transcript:     s.Transcript,
		ActiveContext:  s.ActiveContext,
		Usage:          s.Usage,
		Operation:      operationOut(s.Operation),
		RepairedLength: s.RepairedLength,
	}
}

func operationOut(op *Operation) operationJS {
	if op == nil {
		return operationJS{Kind: "idle"}
	}
	abort := op.AbortRequested
	o := operationJS{
		Kind:           string(op.Kind),
		OperationID:    op.OperationID,
		AbortRequested: &abort,
	}
	if op.Kind == OperationRun {
		o.InputEntryID = op.InputEntryID
		calls := make([]toolStateJS, len(op.ToolCalls))
		for i, t := range op.ToolCalls {
			calls[i] = toolStateJS{
				OperationID:         t.OperationID,
				ToolStartedID:       t.ToolStartedID,
				StepID:              t.StepID,
				AssistantEntryID:    t.AssistantEntryID,
				ToolIndex:           t.ToolIndex,
				ToolCallID:          t.ToolCallID,
				ToolName:            t.ToolName,
				Arguments:           t.Arguments,
				Replay:              t.Replay,
				ReplayKey:           t.ReplayKey,
				EnvironmentIdentity: t.EnvironmentIdentity,
				ResultEntryID:       t.ResultEntryID,
				Status:              t.Status,
			}
		}
		o.ToolCalls = &calls
	} else {
		o.InputThroughEntryID = op.InputThroughEntryID
		o.ResultEntryID = op.ResultEntryID
	}
	if st := op.Step; st != nil {
		o.Step = &stepJS{
			OperationID:           st.OperationID,
			StepID:                st.StepID,
			AttemptID:             st.AttemptID,
			Attempt:               st.Attempt,
			StepKind:              st.StepKind,
			Status:                st.Status,
			ContextThroughEntryID: st.ContextThroughEntryID,
			ConfigurationSnapshot: st.ConfigurationSnapshot,
			ConfigurationDigest:   st.ConfigurationDigest,
			SettledEntryID:        st.SettledEntryID,
			StopReason:            st.StopReason,
		}
	}
	return o
}

// writeState writes {"ok":true,"state":...} as writeResultReflect does,
// byte for byte, but appends the messages (nearly all of a long session's
// output) by hand: through reflection they took longer than the load.
func writeState(w io.Writer, s *State) error {
	part := func(b []byte, v any) ([]byte, error) {
		out, err := json.Marshal(v)
		return append(b, out...), err
	}
	b := make([]byte, 0, 256<<10)
	b = append(b, `{"ok":true,"state":{"header":`...)
	b, err := part(b, headerJS(s.Header))
	for _, f := range []struct {
		name string
		msgs []Message
	}{{"transcript", s.Transcript}, {"activeContext", s.ActiveContext}} {
		if err != nil {
			break
		}
		b = append(append(append(b, ',', '"'), f.name...), `":[`...)
		for i := range f.msgs {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendMessageJSON(b, &f.msgs[i]); err != nil {
				break
			}
			if len(b) >= 192<<10 {
				if _, err = w.Write(b); err != nil {
					return fmt.Errorf("marshal result: %w", err)
				}
				b = b[:0]
			}
		}
		b = append(b, ']')
	}
	if err == nil {
		b = append(b, `,"usage":`...)
		b, err = part(b, s.Usage)
	}
	if err == nil {
		b = append(b, `,"operation":`...)
		b, err = part(b, operationOut(s.Operation))
	}
	if err != nil {
		return fmt.Errorf("marshal result: %w", err)
	}
	b = strconv.AppendInt(append(b, `,"repairedLength":`...), s.RepairedLength, 10)
	b = append(b, '}', '}')
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("marshal result: %w", err)
	}
	return nil
}

// appendMessageJSON appends m as json marshals a Message: its fields in
// order, content null when nil, tool_call_id and tool_calls omitted when
// empty, strings quoted as jsontext does.
func appendMessageJSON(b []byte, m *Message) ([]byte, error) {
	var err error
	q := func(s string) {
		if err == nil {
			b, err = jsontext.AppendQuote(b, s)
		}
	}
	b = append(b, `{"role":`...)
	q(string(m.Role))
	b = append(b, `,"content":`...)
	if m.Content == nil {
		b = append(b, "null"...)
	} else {
		q(*m.Content)
	}
	if m.ToolCallID != "" {
		b = append(b, `,"tool_call_id":`...)
		q(m.ToolCallID)
	}
	if len(m.ToolCalls) > 0 {
		b = append(b, `,"tool_calls":[`...)
		for i := range m.ToolCalls {
			c := &m.ToolCalls[i]
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			q(c.ID)
			b = append(b, `,"type":`...)
			q(c.Type)
			b = append(b, `,"function":{"name":`...)
			q(c.Function.Name)
			b = append(b, `,"arguments":`...)
			q(c.Function.Arguments)
			b = append(b, '}', '}')
		}
		b = append(b, ']')
	}
	return append(b, '}'), err
}
