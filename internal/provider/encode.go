package provider

import (
	"slices"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// requestEncoder encodes request bodies, reusing the encoding of every
// message equal to the message at the same position of the previous
// request. An agent sends its whole active context on every step, and that
// context only grows between compactions, so a step encodes just the
// messages added since the previous one instead of the whole history again
// (encoding dominated the cost of a step on long sessions).
//
// Messages are compared by value, never by pointer: a caller that changes,
// removes or reorders messages (a compaction) gets them encoded afresh.
// Comparing a message with itself is cheap because equal strings that share
// their bytes compare by pointer first. The output is byte for byte what
// encoding the whole wireRequest at once produces.
type requestEncoder struct {
	mu   sync.Mutex
	prev []encodedMessage // the messages of the last request encoded
}

// encodedMessage is a message as it was encoded. It copies the message's
// fields rather than keeping its *string, which the caller could change
// after the fact.
type encodedMessage struct {
	role       string
	content    string
	hasContent bool
	toolCallID string
	toolCalls  []ToolCall
	json       []byte
}

func (e *encodedMessage) is(m Message) bool {
	return e.role == m.Role && e.toolCallID == m.ToolCallID &&
		e.hasContent == (m.Content != nil) && (m.Content == nil || e.content == *m.Content) &&
		slices.Equal(e.toolCalls, m.ToolCalls)
}

func encodeMessage(m Message) (encodedMessage, error) {
	wm := wireMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
	for _, tc := range m.ToolCalls {
		wm.ToolCalls = append(wm.ToolCalls, wireToolCall{
			ID:       tc.ID,
			Type:     "function",
			Function: wireFunction{Name: tc.Name, Arguments: tc.Arguments},
		})
	}
	b, err := json.Marshal(wm)
	if err != nil {
		return encodedMessage{}, err
	}
	e := encodedMessage{role: m.Role, toolCallID: m.ToolCallID, toolCalls: slices.Clone(m.ToolCalls), json: b}
	if m.Content != nil {
		e.content, e.hasContent = *m.Content, true
	}
	return e, nil
}

// encode returns the JSON body of req: the fields of wireRequest in their
// declared order.
func (e *requestEncoder) encode(req Request) ([]byte, error) {
	model, err := json.Marshal(req.Model)
	if err != nil {
		return nil, err
	}
	var tools []byte
	if len(req.Tools) > 0 {
		if tools, err = json.Marshal(wireTools(req.Tools)); err != nil {
			return nil, err
		}
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	msgs := make([]encodedMessage, len(req.Messages))
	size := len(model) + len(tools) + 100
	for i, m := range req.Messages {
		if i < len(e.prev) && e.prev[i].is(m) {
			msgs[i] = e.prev[i]
		} else if msgs[i], err = encodeMessage(m); err != nil {
			return nil, err
		}
		size += len(msgs[i].json) + 1
	}
	e.prev = msgs

	b := make([]byte, 0, size)
	b = append(b, `{"model":`...)
	b = append(b, model...)
	b = append(b, `,"messages":[`...)
	for i, m := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, m.json...)
	}
	b = append(b, ']')
	if tools != nil {
		b = append(b, `,"tools":`...)
		b = append(b, tools...)
	}
	b = append(b, `,"stream":true,"stream_options":{"include_usage":true}}`...)
	return b, nil
}

func wireTools(ts []ToolDefinition) []wireTool {
	w := make([]wireTool, 0, len(ts))
	for _, t := range ts {
		params := t.Parameters
		if len(params) == 0 {
			params = jsontext.Value(emptySchema)
		}
		w = append(w, wireTool{
			Type:     "function",
			Function: wireToolDef{Name: t.Name, Description: t.Description, Parameters: params},
		})
	}
	return w
}
