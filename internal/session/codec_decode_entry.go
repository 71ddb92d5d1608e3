package session

import "fmt"

// Members of an entry object across all entry variants, in the JCS order
// of their names. Bit i is entryMembers[i], where each member's name,
// reader and writer are declared once; each variant's members are declared
// once in its mask below, for the decoder (exactly these, checked once the
// whole object is read, because member order is free) and the encoder.
const (
	eAssistantEntryID uint64 = 1 << iota
	eAttemptID
	eCompactedThrough
	eMessage
	eOperationID
	eResult
	eRetainedTail
	eStepID
	eStopReason
	eSummary
	eToolIndex
	eToolName
	eToolStartedID
	eType

	eUser        = eType | eMessage
	eAssistant   = eType | eMessage | eStepID | eAttemptID | eStopReason
	eStarted     = eType | eMessage | eStepID | eToolName | eToolStartedID | eResult
	eSynthetic   = eType | eMessage | eStepID | eAssistantEntryID | eToolIndex | eToolName | eResult
	eCompaction  = eType | eOperationID | eSummary | eCompactedThrough | eRetainedTail
	resultSynth  = "synthetic"
	entryMessage = "message"
)

// resultWire is a persisted tool result {type[, reason]}.
type resultWire struct {
	typ, reason string
	hasReason   bool
}

// entryWire holds every member an entry may have until its variant is
// known (decoding), or the members of a typed entry (encoding).
type entryWire struct {
	have                                         uint64
	typ, stepID, attemptID, stopReason, toolName string
	toolStartedID, assistantEntryID, operationID string
	summary, compactedThrough                    string
	toolIndex                                    int64
	msg                                          messageWire
	result                                       resultWire
	retained                                     []RetainedMessage
}

// entryMember is one member an entry object may have.
type entryMember = wireMember[entryWire]

func entryUUID(name string, field func(w *entryWire) *string) entryMember {
	return stringMember(name, field, (*reader).uuid)
}

func entrySym(name string, field func(w *entryWire) *string) entryMember {
	return stringMember(name, field, (*reader).sym)
}

// entryMembers is read-only: bit i of a mask is entryMembers[i].
var entryMembers = [...]entryMember{
	entryUUID("assistantEntryId", func(w *entryWire) *string { return &w.assistantEntryID }),
	entryUUID("attemptId", func(w *entryWire) *string { return &w.attemptID }),
	entryUUID("compactedThroughEntryId", func(w *entryWire) *string { return &w.compactedThrough }),
	{"message",
		func(d *txDecoder, w *entryWire) (err error) { w.msg, err = d.messageWire(); return err },
		func(b []byte, w *entryWire) []byte {
			m := Message{Role: w.msg.Role, Content: w.msg.contentPtr(), ToolCallID: w.msg.ToolCallID, ToolCalls: w.msg.ToolCalls}
			return appendMessage(b, &m)
		}},
	entryUUID("operationId", func(w *entryWire) *string { return &w.operationID }),
	{"result",
		func(d *txDecoder, w *entryWire) (err error) { w.result, err = d.result(); return err },
		func(b []byte, w *entryWire) []byte {
			if w.result.hasReason {
				return appendSyntheticResult(b, w.result.reason)
			}
			b = append(b, '{')
			b = appendStringMember(b, true, "type", w.result.typ)
			return append(b, '}')
		}},
	{"retainedTail",
		func(d *txDecoder, w *entryWire) (err error) { w.retained, err = d.retainedTail(); return err },
		func(b []byte, w *entryWire) []byte { return appendRetained(b, w.retained) }},
	entryUUID("stepId", func(w *entryWire) *string { return &w.stepID }),
	entrySym("stopReason", func(w *entryWire) *string { return &w.stopReason }),
	{"summary",
		func(d *txDecoder, w *entryWire) (err error) { w.summary, err = d.rd.str("summary"); return err },
		func(b []byte, w *entryWire) []byte { return appendString(b, w.summary) }},
	{"toolIndex",
		func(d *txDecoder, w *entryWire) (err error) { w.toolIndex, err = d.rd.safeInt("toolIndex"); return err },
		func(b []byte, w *entryWire) []byte { return appendInt(b, w.toolIndex) }},
	{"toolName",
		func(d *txDecoder, w *entryWire) (err error) { w.toolName, err = d.rd.interned("toolName"); return err },
		func(b []byte, w *entryWire) []byte { return appendString(b, w.toolName) }},
	entryUUID("toolStartedId", func(w *entryWire) *string { return &w.toolStartedID }),
	entrySym("type", func(w *entryWire) *string { return &w.typ }),
}

func (d *txDecoder) entry() (Entry, error) {
	// Read into the decoder's own wire: the readers are called through the
	// table, so a local one would escape to the heap for every entry.
	d.ew = entryWire{}
	w := &d.ew
	if err := readMembers(d, "entry", entryMembers[:], w, &w.have); err != nil {
		return nil, err
	}
	return w.build()
}

// build turns the members into the entry of their variant.
func (w *entryWire) build() (Entry, error) {
	have, msg := w.have, &w.msg
	switch w.typ {
	case "compaction":
		if have != eCompaction {
			return nil, shapeErr("a compaction entry has exactly type, operationId, summary, compactedThroughEntryId and retainedTail")
		}
		return &CompactionEntry{
			OperationID:             w.operationID,
			Summary:                 w.summary,
			CompactedThroughEntryID: w.compactedThrough,
			RetainedTail:            w.retained,
		}, nil
	case entryMessage:
	default:
		return nil, shapeErr(fmt.Sprintf("unknown entry type %q", w.typ))
	}
	if have&eMessage == 0 {
		return nil, shapeErr("a message entry has a message")
	}
	switch msg.Role {
	case RoleUser:
		if have != eUser {
			return nil, shapeErr("a user entry has exactly type and message")
		}
		return &UserEntry{Content: msg.content}, nil
	case RoleAssistant:
		if have != eAssistant {
			return nil, shapeErr("an assistant entry has exactly type, stepId, attemptId, stopReason and message")
		}
		sr := StopReason(w.stopReason)
		if sr != StopReasonStop && sr != StopReasonToolUse && sr != StopReasonLength {
			return nil, shapeErr(fmt.Sprintf("unknown stopReason %q", w.stopReason))
		}
		// The entry and its content in one allocation.
		box := &struct {
			e       AssistantEntry
			content string
		}{AssistantEntry{StepID: w.stepID, AttemptID: w.attemptID, StopReason: sr, ToolCalls: msg.ToolCalls}, msg.content}
		if !msg.null {
			box.e.Content = &box.content
		}
		return &box.e, nil
	}
	return w.buildToolResult()
}

// buildToolResult builds a tool message: the result of a started tool, or
// a pre-execution synthetic result.
func (w *entryWire) buildToolResult() (Entry, error) {
	have, msg, result := w.have, &w.msg, w.result
	if have&eToolStartedID != 0 {
		if have != eStarted {
			return nil, shapeErr("a started tool's result entry has exactly type, stepId, message, toolName, toolStartedId and result")
		}
		var rt ResultType
		switch {
		case !result.hasReason && (result.typ == string(ResultSuccess) || result.typ == string(ResultError)):
			rt = ResultType(result.typ)
		case result.typ == resultSynth && result.reason == string(ResultInterrupted):
			rt = ResultInterrupted
		default:
			return nil, shapeErr("a started tool's result is success, error or synthetic interrupted")
		}
		return &ToolResultEntry{
			StepID:        w.stepID,
			ToolCallID:    msg.ToolCallID,
			Content:       msg.content,
			ToolName:      w.toolName,
			ToolStartedID: w.toolStartedID,
			Result:        rt,
		}, nil
	}
	if have != eSynthetic {
		return nil, shapeErr("a synthetic result entry has exactly type, stepId, assistantEntryId, toolIndex, message, toolName and result")
	}
	reason := SyntheticReason(result.reason)
	if result.typ != resultSynth || SyntheticContent(reason) == "" {
		return nil, shapeErr("a pre-execution result is synthetic invalidArguments, unknownTool, truncated or aborted")
	}
	return &SyntheticEntry{
		StepID:           w.stepID,
		AssistantEntryID: w.assistantEntryID,
		ToolIndex:        int(w.toolIndex),
		ToolCallID:       msg.ToolCallID,
		Content:          msg.content,
		ToolName:         w.toolName,
		Reason:           reason,
	}, nil
}

// appendEntry writes an entry: its members, in JCS order.
func appendEntry(b []byte, e Entry) ([]byte, error) {
	w, err := entryToWire(e)
	if err != nil {
		return b, err
	}
	return appendMembers(b, entryMembers[:], &w, w.have), nil
}

// entryToWire is build's inverse: the members of a typed entry.
func entryToWire(e Entry) (entryWire, error) {
	var w entryWire
	switch e := e.(type) {
	case *UserEntry:
		w = entryWire{have: eUser, typ: entryMessage, msg: messageWire{Role: RoleUser, content: e.Content}}
	case *AssistantEntry:
		w = entryWire{have: eAssistant, typ: entryMessage, stepID: e.StepID, attemptID: e.AttemptID,
			stopReason: string(e.StopReason), msg: messageWire{Role: RoleAssistant, null: e.Content == nil, ToolCalls: e.ToolCalls}}
		if e.Content != nil {
			w.msg.content = *e.Content
		}
	case *ToolResultEntry:
		w = entryWire{have: eStarted, typ: entryMessage, stepID: e.StepID, toolName: e.ToolName,
			toolStartedID: e.ToolStartedID, msg: messageWire{Role: RoleTool, content: e.Content, ToolCallID: e.ToolCallID}}
		switch e.Result {
		case ResultSuccess, ResultError:
			w.result = resultWire{typ: string(e.Result)}
		case ResultInterrupted:
			w.result = resultWire{typ: resultSynth, reason: string(ResultInterrupted), hasReason: true}
		default:
			return w, fmt.Errorf("unknown tool result type %q", e.Result)
		}
	case *SyntheticEntry:
		w = entryWire{have: eSynthetic, typ: entryMessage, stepID: e.StepID, assistantEntryID: e.AssistantEntryID,
			toolIndex: int64(e.ToolIndex), toolName: e.ToolName,
			msg:    messageWire{Role: RoleTool, content: e.Content, ToolCallID: e.ToolCallID},
			result: resultWire{typ: resultSynth, reason: string(e.Reason), hasReason: true}}
	case *CompactionEntry:
		w = entryWire{have: eCompaction, typ: "compaction", operationID: e.OperationID, summary: e.Summary,
			compactedThrough: e.CompactedThroughEntryID, retained: e.RetainedTail}
	default:
		return w, fmt.Errorf("unknown entry type %T", e)
	}
	return w, nil
}

func (d *txDecoder) result() (resultWire, error) {
	rd := &d.rd
	var r resultWire
	hasType := false
	err := rd.members("result", func(name []byte) (err error) {
		switch string(name) {
		case "type":
			rd.dup = rd.dup || hasType
			hasType = true
			r.typ, err = rd.sym("result type")
		case "reason":
			rd.dup = rd.dup || r.hasReason
			r.hasReason = true
			r.reason, err = rd.sym("result reason")
		default:
			return shapeErr(fmt.Sprintf("unknown result member %q", name))
		}
		return err
	})
	if err != nil {
		return r, err
	}
	if !hasType || (r.typ == resultSynth) != r.hasReason {
		return r, shapeErr("a result has a type, and a reason exactly when synthetic")
	}
	return r, nil
}

// Members of a message object.
const (
	mRole = 1 << iota
	mContent
	mToolCallID
	mToolCalls
)

// messageWire is a decoded message whose content is kept by value, so
// that entries holding a string need no extra allocation.
type messageWire struct {
	Role       Role
	content    string
	null       bool // content is null
	ToolCallID string
	ToolCalls  []ToolCall
}

func (m *messageWire) contentPtr() *string {
	if m.null {
		return nil
	}
	c := m.content
	return &c
}

// message reads a message into its persisted form.
func (d *txDecoder) message() (Message, error) {
	w, err := d.messageWire()
	return Message{Role: w.Role, Content: w.contentPtr(), ToolCallID: w.ToolCallID, ToolCalls: w.ToolCalls}, err
}

// messageWire reads a model-visible message and checks it against its
// role: user {role, content: non-empty string}; assistant {role, content:
// string or null, tool_calls?: non-empty}; tool {role, content: string,
// tool_call_id: non-empty}.
func (d *txDecoder) messageWire() (messageWire, error) {
	rd := &d.rd
	var m messageWire
	var have uint
	err := rd.members("message", func(name []byte) (err error) {
		switch string(name) {
		case "role":
			member(rd, &have, mRole)
			var role string
			role, err = rd.sym("role")
			m.Role = Role(role)
		case "content":
			member(rd, &have, mContent)
			if rd.kind() == 'n' {
				m.null = true
				err = rd.skip()
			} else {
				m.content, err = rd.str("content must be a string or null; it")
			}
		case "tool_call_id":
			member(rd, &have, mToolCallID)
			m.ToolCallID, err = rd.interned("tool_call_id")
		case "tool_calls":
			member(rd, &have, mToolCalls)
			m.ToolCalls, err = d.toolCalls()
		default:
			return shapeErr(fmt.Sprintf("unknown message member %q", name))
		}
		return err
	})
	if err != nil {
		return m, err
	}
	switch m.Role {
	case RoleUser:
		if have != mRole|mContent || m.null || m.content == "" {
			return m, shapeErr("a user message has exactly role and a non-empty string content")
		}
	case RoleAssistant:
		if have&^mToolCalls != mRole|mContent {
			return m, shapeErr("an assistant message has exactly role, content and optional tool_calls")
		}
	case RoleTool:
		if have != mRole|mContent|mToolCallID || m.null {
			return m, shapeErr("a tool message has exactly role, string content and tool_call_id")
		}
	default:
		return m, shapeErr(fmt.Sprintf("unknown message role %q", m.Role))
	}
	return m, nil
}

// toolCalls reads a non-empty array of {id, type: "function", function:
// {name, arguments}}.
func (d *txDecoder) toolCalls() ([]ToolCall, error) {
	rd := &d.rd
	var calls []ToolCall
	err := rd.elements("tool_calls", func() error {
		c, err := d.toolCall()
		if err != nil {
			return err
		}
		calls = append(calls, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(calls) == 0 {
		return nil, shapeErr("tool_calls must not be empty")
	}
	return calls, nil
}

func (d *txDecoder) toolCall() (ToolCall, error) {
	rd := &d.rd
	var c ToolCall
	var have uint
	err := rd.members("a tool call", func(name []byte) (err error) {
		switch string(name) {
		case "id":
			member(rd, &have, 1)
			c.ID, err = rd.interned("tool call id")
		case "type":
			member(rd, &have, 2)
			c.Type, err = rd.sym("tool call type")
			if err == nil && c.Type != "function" {
				err = shapeErr(`tool call type must be "function"`)
			}
		case "function":
			member(rd, &have, 4)
			c.Function, err = d.function()
		default:
			return shapeErr(fmt.Sprintf("unknown tool call member %q", name))
		}
		return err
	})
	if err != nil {
		return c, err
	}
	if have != 7 {
		return c, shapeErr("a tool call has exactly id, type and function")
	}
	return c, nil
}

func (d *txDecoder) function() (FunctionCall, error) {
	rd := &d.rd
	var f FunctionCall
	var have uint
	err := rd.members("function", func(name []byte) (err error) {
		switch string(name) {
		case "name":
			member(rd, &have, 1)
			f.Name, err = rd.interned("function name")
		case "arguments":
			member(rd, &have, 2)
			f.Arguments, err = rd.str("function arguments")
		default:
			return shapeErr(fmt.Sprintf("unknown function member %q", name))
		}
		return err
	})
	if err != nil {
		return f, err
	}
	if have != 3 {
		return f, shapeErr("a function has exactly name and arguments")
	}
	return f, nil
}

// retainedTail reads [{sourceEntryId, message}, ...] (possibly empty).
func (d *txDecoder) retainedTail() ([]RetainedMessage, error) {
	rd := &d.rd
	tail := []RetainedMessage{}
	err := rd.elements("retainedTail", func() error {
		var (
			rm   RetainedMessage
			have uint
		)
		err := rd.members("a retained message", func(name []byte) (err error) {
			switch string(name) {
			case "sourceEntryId":
				member(rd, &have, 1)
				rm.SourceEntryID, err = rd.uuid("sourceEntryId")
			case "message":
				member(rd, &have, 2)
				rm.Message, err = d.message()
			default:
				return shapeErr(fmt.Sprintf("unknown retained message member %q", name))
			}
			return err
		})
		if err != nil {
			return err
		}
		if have != 3 {
			return shapeErr("a retained message has exactly sourceEntryId and message")
		}
		tail = append(tail, rm)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return tail, nil
}
