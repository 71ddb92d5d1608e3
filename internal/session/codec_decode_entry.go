package session

import "fmt"

// Members of an entry object; which of them a variant has is checked once
// the whole object is read, because member order is free.
const (
	eType = 1 << iota
	eMessage
	eStepID
	eAttemptID
	eStopReason
	eToolName
	eToolStartedID
	eResult
	eAssistantEntryID
	eToolIndex
	eOperationID
	eSummary
	eCompactedThrough
	eRetainedTail

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

func (d *txDecoder) entry() (Entry, error) {
	rd := &d.rd
	var (
		have                                         uint
		typ, stepID, attemptID, stopReason, toolName string
		toolStartedID, assistantEntryID, operationID string
		summary, compactedThrough                    string
		toolIndex                                    int64
		msg                                          messageWire
		result                                       resultWire
		retained                                     []RetainedMessage
	)
	err := rd.members("entry", func(name []byte) (err error) {
		switch string(name) {
		case "type":
			member(rd, &have, eType)
			typ, err = rd.sym("entry type")
		case "message":
			member(rd, &have, eMessage)
			msg, err = d.messageWire()
		case "stepId":
			member(rd, &have, eStepID)
			stepID, err = rd.uuid("stepId")
		case "attemptId":
			member(rd, &have, eAttemptID)
			attemptID, err = rd.uuid("attemptId")
		case "stopReason":
			member(rd, &have, eStopReason)
			stopReason, err = rd.sym("stopReason")
		case "toolName":
			member(rd, &have, eToolName)
			toolName, err = rd.interned("toolName")
		case "toolStartedId":
			member(rd, &have, eToolStartedID)
			toolStartedID, err = rd.uuid("toolStartedId")
		case "result":
			member(rd, &have, eResult)
			result, err = d.result()
		case "assistantEntryId":
			member(rd, &have, eAssistantEntryID)
			assistantEntryID, err = rd.uuid("assistantEntryId")
		case "toolIndex":
			member(rd, &have, eToolIndex)
			toolIndex, err = rd.safeInt("toolIndex")
		case "operationId":
			member(rd, &have, eOperationID)
			operationID, err = rd.uuid("operationId")
		case "summary":
			member(rd, &have, eSummary)
			summary, err = rd.str("summary")
		case "compactedThroughEntryId":
			member(rd, &have, eCompactedThrough)
			compactedThrough, err = rd.uuid("compactedThroughEntryId")
		case "retainedTail":
			member(rd, &have, eRetainedTail)
			retained, err = d.retainedTail()
		default:
			return shapeErr(fmt.Sprintf("unknown entry member %q", name))
		}
		return err
	})
	if err != nil {
		return nil, err
	}

	switch typ {
	case "compaction":
		if have != eCompaction {
			return nil, shapeErr("a compaction entry has exactly type, operationId, summary, compactedThroughEntryId and retainedTail")
		}
		return &CompactionEntry{
			OperationID:             operationID,
			Summary:                 summary,
			CompactedThroughEntryID: compactedThrough,
			RetainedTail:            retained,
		}, nil
	case entryMessage:
	default:
		return nil, shapeErr(fmt.Sprintf("unknown entry type %q", typ))
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
		sr := StopReason(stopReason)
		if sr != StopReasonStop && sr != StopReasonToolUse && sr != StopReasonLength {
			return nil, shapeErr(fmt.Sprintf("unknown stopReason %q", stopReason))
		}
		// The entry and its content in one allocation.
		box := &struct {
			e       AssistantEntry
			content string
		}{AssistantEntry{StepID: stepID, AttemptID: attemptID, StopReason: sr, ToolCalls: msg.ToolCalls}, msg.content}
		if !msg.null {
			box.e.Content = &box.content
		}
		return &box.e, nil
	}
	// A tool message: the result of a started tool, or a pre-execution
	// synthetic result.
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
			StepID:        stepID,
			ToolCallID:    msg.ToolCallID,
			Content:       msg.content,
			ToolName:      toolName,
			ToolStartedID: toolStartedID,
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
		StepID:           stepID,
		AssistantEntryID: assistantEntryID,
		ToolIndex:        int(toolIndex),
		ToolCallID:       msg.ToolCallID,
		Content:          msg.content,
		ToolName:         toolName,
		Reason:           reason,
	}, nil
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
