package provider

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"slices"
	"strings"
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
// their bytes compare by pointer first. The body is byte for byte what
// encoding the whole ChatRequest at once produces; it is sent from the
// cached encodings in place rather than copied into one buffer.
type requestEncoder struct {
	// opts are fixed when the client is made.
	opts encodeOptions

	mu   sync.Mutex
	prev []encodedMessage // the messages of the last request, by position
}

// encodeOptions are the request parameters beyond the messages.
type encodeOptions struct {
	reasoning       string // a Reasoning constant
	usageAccounting bool
	webPlugin       bool
}

// encodedMessage is a message as it was encoded at its position. It copies
// the message's fields rather than keeping its *string, which the caller
// could change after the fact.
type encodedMessage struct {
	role       string
	content    string
	hasContent bool
	toolCallID string
	toolCalls  []ToolCall
	details    []byte
	images     []Image
	// marked is set when the message carries a cache breakpoint.
	marked bool
	// json is the encoding, preceded by the separating comma unless the
	// message is the first. It is never modified once made: bodies of
	// earlier requests may still be reading it.
	json []byte
}

func (e *encodedMessage) is(m Message) bool {
	return e.role == m.Role && e.toolCallID == m.ToolCallID &&
		e.hasContent == (m.Content != nil) && (m.Content == nil || e.content == *m.Content) &&
		slices.Equal(e.toolCalls, m.ToolCalls) && bytes.Equal(e.details, m.ReasoningDetails) &&
		slices.EqualFunc(e.images, m.Images, func(a, b Image) bool { return a.MediaType == b.MediaType && bytes.Equal(a.Data, b.Data) })
}

// cacheMarked reports whether requests for model carry Anthropic cache
// breakpoints: Claude caches only what a request marks, while OpenAI,
// Gemini and DeepSeek models cache a stable prefix on their own.
func cacheMarked(model string) bool { return strings.HasPrefix(model, "anthropic/") }

// marksMessage reports whether the message at position i carries an
// explicit breakpoint: the system prompt, which Anthropic caches together
// with the tool definitions before it. The breakpoint of the growing
// conversation comes from the request's automatic caching, so no message
// changes from one request to the next.
func marksMessage(model string, i int, m Message) bool {
	return i == 0 && m.Role == RoleSystem && m.Content != nil && *m.Content != "" && cacheMarked(model)
}

// messageJSON encodes one message. reasoning_details are spliced in as
// received: an encoder would normalize their spacing and escapes, and
// providers check them byte for byte (signatures).
func messageJSON(m Message, marked bool) ([]byte, error) {
	wm := ChatMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
	if marked {
		wm.Content = []ChatTextPart{{Type: "text", Text: *m.Content, CacheControl: &ChatCacheControl{Type: "ephemeral"}}}
	}
	if len(m.Images) > 0 && m.Content != nil {
		parts := []any{ChatTextPart{Type: "text", Text: *m.Content}}
		for _, img := range m.Images {
			parts = append(parts, ChatImagePart{Type: "image_url", ImageURL: ChatImageURL{URL: "data:" + img.MediaType + ";base64," + base64.StdEncoding.EncodeToString(img.Data)}})
		}
		wm.Content = parts
	}
	for _, tc := range m.ToolCalls {
		wm.ToolCalls = append(wm.ToolCalls, ChatToolCall{
			ID:       tc.ID,
			Type:     "function",
			Function: ChatFunction{Name: tc.Name, Arguments: tc.Arguments},
		})
	}
	b, err := json.Marshal(wm)
	if err != nil {
		return nil, err
	}
	if len(m.ReasoningDetails) > 0 {
		if !m.ReasoningDetails.IsValid() {
			return nil, errors.New("reasoning_details are not valid JSON")
		}
		details, annotations := splitAnnotations(m.ReasoningDetails)
		if len(details) > 0 {
			b = append(b[:len(b)-1], `,"reasoning_details":`...)
			b = append(append(b, details...), '}')
		}
		if len(annotations) > 0 {
			b = append(b[:len(b)-1], `,"annotations":`...)
			b = append(append(b, annotations...), '}')
		}
	}
	return b, nil
}

func encodeMessage(m Message, first, marked bool) (encodedMessage, error) {
	b, err := messageJSON(m, marked)
	if err != nil {
		return encodedMessage{}, err
	}
	if !first {
		b = append([]byte{','}, b...)
	}
	e := encodedMessage{
		role: m.Role, toolCallID: m.ToolCallID, toolCalls: slices.Clone(m.ToolCalls),
		details: bytes.Clone(m.ReasoningDetails), images: slices.Clone(m.Images), marked: marked, json: b,
	}
	if m.Content != nil {
		e.content, e.hasContent = *m.Content, true
	}
	return e, nil
}

// encode returns the JSON body of req: the fields of ChatRequest in their
// declared order.
func (e *requestEncoder) encode(req Request) (requestBody, error) {
	head, err := json.Marshal(req.Model)
	if err != nil {
		return requestBody{}, err
	}
	head = append([]byte(`{"model":`), head...)
	head = append(head, `,"messages":[`...)
	tail := []byte{']'}
	if len(req.Tools) > 0 {
		tools, err := json.Marshal(wireTools(req.Tools))
		if err != nil {
			return requestBody{}, err
		}
		tail = append(append(tail, `,"tools":`...), tools...)
	}
	tail = append(tail, e.opts.params(cacheMarked(req.Model))...)
	tail = append(tail, `,"stream":true,"stream_options":{"include_usage":true}}`...)

	e.mu.Lock()
	defer e.mu.Unlock()
	body := requestBody{parts: make([][]byte, 0, len(req.Messages)+2)}
	body.parts = append(body.parts, head)
	// Positions are independent, so e.prev is updated in place; a failed
	// encoding leaves every entry describing its own bytes.
	for i, m := range req.Messages {
		marked := marksMessage(req.Model, i, m)
		if i >= len(e.prev) || !e.prev[i].is(m) || e.prev[i].marked != marked {
			em, err := encodeMessage(m, i == 0, marked)
			if err != nil {
				return requestBody{}, err
			}
			if i < len(e.prev) {
				e.prev[i] = em
			} else {
				e.prev = append(e.prev, em)
			}
		}
		body.parts = append(body.parts, e.prev[i].json)
	}
	clear(e.prev[len(req.Messages):]) // let go of what a compaction dropped
	e.prev = e.prev[:len(req.Messages)]
	body.parts = append(body.parts, tail)
	for _, p := range body.parts {
		body.size += int64(len(p))
	}
	return body, nil
}

// requestBody is an encoded request as the byte slices it is made of.
type requestBody struct {
	parts [][]byte
	size  int64
}

// reader returns a new reader of the whole body.
func (b requestBody) reader() io.Reader { return &partsReader{parts: b.parts} }

// partsReader reads a sequence of byte slices without modifying them.
type partsReader struct {
	parts [][]byte
	off   int // read offset in parts[0]
}

func (r *partsReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && len(r.parts) > 0 {
		c := copy(p[n:], r.parts[0][r.off:])
		n += c
		r.off += c
		if r.off == len(r.parts[0]) {
			r.parts, r.off = r.parts[1:], 0
		}
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

func wireTools(ts []ToolDefinition) []ChatTool {
	w := make([]ChatTool, 0, len(ts))
	for _, t := range ts {
		params := t.Parameters
		if len(params) == 0 {
			params = jsontext.Value(emptySchema)
		}
		w = append(w, ChatTool{
			Type:     "function",
			Function: ChatToolDef{Name: t.Name, Description: t.Description, Parameters: params},
		})
	}
	return w
}

// params encodes the request members between the tools and "stream", in
// ChatRequest order: the reasoning effort, usage accounting, and automatic
// caching for models that cache only on request.
func (o encodeOptions) params(autoCache bool) []byte {
	var b []byte
	switch o.reasoning {
	case ReasoningOff:
		b = append(b, `,"reasoning":{"effort":"none"}`...)
	case ReasoningLow, ReasoningMedium, ReasoningHigh:
		b = append(b, `,"reasoning":{"effort":"`+o.reasoning+`"}`...)
	}
	if o.usageAccounting {
		b = append(b, `,"usage":{"include":true}`...)
	}
	if autoCache {
		b = append(b, `,"cache_control":{"type":"ephemeral"}`...)
	}
	if o.webPlugin {
		b = append(b, `,"plugins":[{"id":"web"}]`...)
	}
	return b
}
