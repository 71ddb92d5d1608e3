package anthropic

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/provider"
)

// Event is one Messages API stream event; members of all types. The wire
// types are exported for the scripted server of tests
// (internal/providertest), which writes its replies with them.
type Event struct {
	Type         string         `json:"type"`
	Index        *int           `json:"index"`
	Message      *StartMessage  `json:"message"`
	ContentBlock jsontext.Value `json:"content_block"`
	Delta        *EventDelta    `json:"delta"`
	Usage        *Usage         `json:"usage"`
	Error        *APIError      `json:"error"`
}

// StartMessage is the message of message_start.
type StartMessage struct {
	Model string `json:"model"`
	Usage *Usage `json:"usage"`
	// Content is usually empty here; a server that gives blocks whole
	// puts them here, and they are used as given.
	Content []jsontext.Value `json:"content"`
}

// EventDelta is the delta of content_block_delta and message_delta.
type EventDelta struct {
	Type        string  `json:"type"`
	Text        string  `json:"text"`
	PartialJSON string  `json:"partial_json"`
	Thinking    string  `json:"thinking"`
	Signature   string  `json:"signature"`
	StopReason  *string `json:"stop_reason"`
	// Citation is the citation of a citations_delta, kept raw.
	Citation jsontext.Value `json:"citation,omitzero"`
}

// Usage fields are pointers: message_delta repeats only some of them.
type Usage struct {
	InputTokens              *int64 `json:"input_tokens"`
	OutputTokens             *int64 `json:"output_tokens"`
	CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
	// ServerToolUse counts the server tools' uses (web searches).
	ServerToolUse *struct {
		WebSearchRequests *int64 `json:"web_search_requests"`
	} `json:"server_tool_use"`
}

// APIError is the error of an error event or body.
type APIError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// ContentBlock is the start of a block.
type ContentBlock struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ID       string `json:"id"`
	Name     string `json:"name"`
	Thinking string `json:"thinking"`
	// Input is the tool_use input when it is given whole rather than
	// streamed as input_json_delta.
	Input jsontext.Value `json:"input"`
	// Citations of a text block given whole (web search).
	Citations []jsontext.Value `json:"citations,omitzero"`
}

// blockState accumulates one content block.
type blockState struct {
	kind      string
	text      strings.Builder // text or thinking
	signature strings.Builder
	id, name  string
	input     strings.Builder
	// given is the tool_use input of content_block_start, used when no
	// input_json_delta follows.
	given jsontext.Value
	// raw is the start of a redacted_thinking block (or, in full mode, of
	// a block this package does not read), kept as received.
	raw jsontext.Value
	// citations of a text block, raw, in order.
	citations []jsontext.Value
}

// decoder turns the events of one reply into a Response.
type decoder struct {
	apiKey  string
	onDelta func(provider.Delta)
	started bool // message_start seen
	// content is set once a content event arrived: an error after it is
	// never retried (the reply had begun).
	content  bool
	stopped  bool // message_stop seen
	stop     string
	model    string
	blocks   map[int]*blockState
	in       Usage
	outputTk int64
	// full keeps every block of the reply, in order, as its
	// ReasoningDetails (see search.go); set when the web_search server
	// tool is offered.
	full bool
}

func newDecoder(apiKey string, onDelta func(provider.Delta)) *decoder {
	return &decoder{apiKey: apiKey, onDelta: onDelta, blocks: make(map[int]*blockState)}
}

// readStream reads an SSE reply up to message_stop.
func readStream(r io.Reader, apiKey string, onDelta func(provider.Delta)) (provider.Response, error) {
	return readStreamFull(r, apiKey, onDelta, false)
}

// readStreamFull is readStream, keeping every block when full.
func readStreamFull(r io.Reader, apiKey string, onDelta func(provider.Delta), full bool) (provider.Response, error) {
	d := newDecoder(apiKey, onDelta)
	d.full = full
	err := provider.ReadEvents(r, func(data []byte) (bool, error) {
		if err := d.event(data); err != nil {
			return false, err
		}
		return d.stopped, nil
	})
	if err != nil {
		return provider.Response{}, err
	}
	return d.result()
}

// event applies one event.
func (d *decoder) event(data []byte) error {
	var ev Event
	if err := json.Unmarshal(data, &ev); err != nil {
		return provider.Malformed("an invalid stream event")
	}
	switch ev.Type {
	case "ping":
	case "message_start":
		if ev.Message == nil {
			return provider.Malformed("message_start without a message")
		}
		d.started = true
		d.model = ev.Message.Model
		d.addUsage(ev.Message.Usage)
		for i, cb := range ev.Message.Content {
			if err := d.startBlock(i, cb); err != nil {
				return err
			}
		}
	case "content_block_start":
		d.content = true
		return d.blockStart(ev)
	case "content_block_delta":
		d.content = true
		return d.blockDelta(ev)
	case "content_block_stop":
		d.content = true
	case "message_delta":
		if ev.Delta != nil && ev.Delta.StopReason != nil {
			d.stop = *ev.Delta.StopReason
		}
		d.addUsage(ev.Usage)
	case "message_stop":
		if !d.started {
			return provider.Malformed("message_stop before message_start")
		}
		d.stopped = true
	case "error":
		return d.streamError(ev.Error)
	default:
		// New event types are ignored, as the API's versioning policy asks.
	}
	return nil
}

func (d *decoder) block(ev Event) (*blockState, error) {
	if ev.Index == nil || *ev.Index < 0 {
		return nil, provider.Malformed("a content event without an index")
	}
	b, ok := d.blocks[*ev.Index]
	if !ok {
		return nil, provider.Malformed("a delta for a block that did not start")
	}
	return b, nil
}

func (d *decoder) blockStart(ev Event) error {
	if ev.Index == nil || *ev.Index < 0 {
		return provider.Malformed("a content event without an index")
	}
	return d.startBlock(*ev.Index, ev.ContentBlock)
}

// startBlock starts the block at index from its (possibly whole) start.
func (d *decoder) startBlock(index int, raw jsontext.Value) error {
	if _, dup := d.blocks[index]; dup {
		return provider.Malformed("two content blocks with one index")
	}
	var cb ContentBlock
	if err := json.Unmarshal(raw, &cb); err != nil {
		return provider.Malformed("an invalid content block")
	}
	b := &blockState{kind: cb.Type, id: cb.ID, name: cb.Name}
	switch cb.Type {
	case "text":
		b.text.WriteString(cb.Text)
		b.citations = append(b.citations, cb.Citations...)
		d.show(provider.Delta{Content: cb.Text})
	case "thinking":
		b.text.WriteString(cb.Thinking)
		d.show(provider.Delta{Reasoning: cb.Thinking})
	case "redacted_thinking":
		b.raw = bytes.Clone(raw)
	case "tool_use", "server_tool_use":
		if cb.Input.Kind() == '{' {
			b.given = bytes.Clone(cb.Input)
		}
	default:
		// web_search_tool_result and blocks of newer server tools: whole
		// in their start, kept as the provider sent them.
		b.raw = bytes.Clone(raw)
	}
	d.blocks[index] = b
	return nil
}

func (d *decoder) blockDelta(ev Event) error {
	b, err := d.block(ev)
	if err != nil {
		return err
	}
	if ev.Delta == nil {
		return provider.Malformed("a content delta without a delta")
	}
	switch ev.Delta.Type {
	case "text_delta":
		b.text.WriteString(ev.Delta.Text)
		d.show(provider.Delta{Content: ev.Delta.Text})
	case "input_json_delta":
		b.input.WriteString(ev.Delta.PartialJSON)
	case "thinking_delta":
		b.text.WriteString(ev.Delta.Thinking)
		d.show(provider.Delta{Reasoning: ev.Delta.Thinking})
	case "signature_delta":
		b.signature.WriteString(ev.Delta.Signature)
	case "citations_delta":
		if ev.Delta.Citation.Kind() == '{' {
			b.citations = append(b.citations, bytes.Clone(ev.Delta.Citation))
		}
	}
	return nil
}

func (d *decoder) show(delta provider.Delta) {
	if d.onDelta != nil && (delta.Content != "" || delta.Reasoning != "") {
		d.onDelta(delta)
	}
}

func (d *decoder) addUsage(u *Usage) {
	if u == nil {
		return
	}
	set := func(dst *Usage, src *Usage) {
		if src.InputTokens != nil {
			dst.InputTokens = src.InputTokens
		}
		if src.CacheCreationInputTokens != nil {
			dst.CacheCreationInputTokens = src.CacheCreationInputTokens
		}
		if src.CacheReadInputTokens != nil {
			dst.CacheReadInputTokens = src.CacheReadInputTokens
		}
		if src.ServerToolUse != nil {
			dst.ServerToolUse = src.ServerToolUse
		}
	}
	set(&d.in, u)
	if u.OutputTokens != nil {
		d.outputTk = *u.OutputTokens // cumulative
	}
}

// streamError classifies an error event (convention 1): an overload, a
// rate limit or an internal error before any content may be sent again; a
// prompt that is too long compacts.
func (d *decoder) streamError(e *APIError) error {
	if e == nil {
		return &provider.Error{Kind: provider.KindProviderError, Message: "provider reported an error"}
	}
	pe := &provider.Error{Kind: provider.KindProviderError, Message: "provider reported an error"}
	if t := provider.Sanitize(e.Type, d.apiKey, 40); t != "" {
		pe.Message += " (" + t + ")"
	}
	if msg := provider.Sanitize(e.Message, d.apiKey, 200); msg != "" {
		pe.Message += ": " + msg
	}
	switch e.Type {
	case "overloaded_error":
		pe.Status = 529
	case "rate_limit_error":
		pe.Kind, pe.Status = provider.KindRateLimited, http.StatusTooManyRequests
	case "api_error":
		pe.Status = http.StatusInternalServerError
	case "timeout_error":
		pe.Status = http.StatusGatewayTimeout
	case "invalid_request_error", "request_too_large":
		if strings.Contains(strings.ToLower(e.Message), "prompt is too long") || e.Type == "request_too_large" {
			pe.Kind = provider.KindContextOverflow
		}
	}
	pe.Retryable = pe.Status != 0 && !d.content
	if d.started {
		u := d.usage() // billed even though the reply failed
		pe.Usage = &u
	}
	return pe
}

// finishReason maps the stop reason to the provider's finish reason (and
// the detail a refusal keeps).
func (d *decoder) finishReason() (reason, detail string, err error) {
	switch d.stop {
	case "end_turn", "stop_sequence":
		return provider.FinishStop, "", nil
	case "tool_use":
		return provider.FinishToolUse, "", nil
	case "max_tokens", "model_context_window_exceeded":
		return provider.FinishLength, "", nil
	case "refusal":
		return provider.FinishRefusal, d.stop, nil
	case "pause_turn":
		return provider.FinishPause, "", nil
	case "":
		return "", "", provider.Malformed("a reply without a stop reason")
	default:
		u := d.usage()
		return "", "", &provider.Error{
			Kind:    provider.KindUnsupportedFinishReason,
			Message: fmt.Sprintf("provider finished with unsupported reason %q", provider.Sanitize(d.stop, d.apiKey, 40)),
			Usage:   &u,
		}
	}
}

// result settles the reply.
func (d *decoder) result() (provider.Response, error) {
	var r provider.Response
	var err error
	if r.FinishReason, r.StopDetail, err = d.finishReason(); err != nil {
		return provider.Response{}, err
	}
	if err := d.collect(&r); err != nil {
		return provider.Response{}, err
	}
	r.Usage = d.usage()
	return r, nil
}

// collect sets the reply's text, tool calls and details from its blocks,
// in index order.
func (d *decoder) collect(r *provider.Response) error {
	indices := make([]int, 0, len(d.blocks))
	for i := range d.blocks {
		indices = append(indices, i)
	}
	sort.Ints(indices)
	var text strings.Builder
	var details []byte
	addDetail := func(v []byte) {
		if details == nil {
			details = []byte{'['}
		} else {
			details = append(details, ',')
		}
		details = append(details, v...)
	}
	var blocks []*blockState
	for _, i := range indices {
		b := d.blocks[i]
		blocks = append(blocks, b)
		switch b.kind {
		case "text":
			text.WriteString(b.text.String())
			if d.full {
				addDetail(textBlock(b))
			}
		case "tool_use", "server_tool_use":
			if b.name == "" || b.id == "" {
				return provider.Malformed("a tool call without an id or a name")
			}
			args := b.input.String()
			if strings.TrimSpace(args) == "" {
				// Input given whole in content_block_start, else a call
				// without parameters (which streams no input).
				args = "{}"
				if b.given != nil {
					args = string(b.given)
				}
			}
			if d.full {
				addDetail(useBlock(b.kind, b.id, b.name, args))
			}
			if b.kind == "tool_use" {
				r.ToolCalls = append(r.ToolCalls, provider.ToolCall{ID: b.id, Name: b.name, Arguments: args})
			}
		case "thinking":
			v, err := json.Marshal(struct {
				Type      string `json:"type"`
				Thinking  string `json:"thinking"`
				Signature string `json:"signature"`
			}{"thinking", b.text.String(), b.signature.String()})
			if err != nil {
				return provider.Malformed("an invalid thinking block")
			}
			addDetail(v)
		case "redacted_thinking":
			addDetail(b.raw)
		default:
			if d.full && b.raw != nil {
				addDetail(b.raw)
			}
		}
	}
	if details != nil {
		r.ReasoningDetails = append(details, ']')
	}
	if text.Len() > 0 {
		s := text.String()
		r.Content = &s
	}
	r.Sources = sources(blocks)
	return nil
}

// usage normalizes as runtime.md §1 means it: Anthropic's input_tokens
// already exclude the cached prefix.
func (d *decoder) usage() provider.Usage {
	val := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	u := provider.Usage{
		Input:      val(d.in.InputTokens),
		Output:     d.outputTk,
		CacheRead:  val(d.in.CacheReadInputTokens),
		CacheWrite: val(d.in.CacheCreationInputTokens),
	}
	u.PromptTokens = u.Input + u.CacheRead + u.CacheWrite
	u.Cost = Price(d.model, u)
	if s := d.in.ServerToolUse; u.Cost != nil && s != nil && s.WebSearchRequests != nil {
		*u.Cost += float64(*s.WebSearchRequests) * webSearchPrice
	}
	return u
}
