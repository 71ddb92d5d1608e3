package providertest

import (
	"fmt"
	"net/http"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/provider/anthropic"
)

// Replies to a POST to a path ending in /messages are rendered as
// Anthropic's Messages API, in the provider's own wire types (members its
// decoder does not read are left out): an SSE stream of message_start, one content
// block per thinking (Reasoning, ended by Signature), text and tool call,
// message_delta with the stop reason and usage, and message_stop; a
// StreamError is an error event (type StreamErrorType, by default
// overloaded_error) in place of the rest; a Status is an Anthropic error
// body (529 is overloaded_error). Body, JSON, Hang, Cut and Delay work as
// for Chat Completions (JSON is not rendered differently).

func anthropicResponse(r Reply, model string) response {
	if r.Body != "" || r.Status == 0 || r.Status == http.StatusOK {
		if r.Body != "" {
			return build(r, model)
		}
	} else {
		body := mustMarshalWire(anthropic.Event{Type: "error", Error: &anthropic.APIError{
			Type: anthropicErrorType(r.Status), Message: fmt.Sprintf("scripted HTTP %d", r.Status),
		}})
		return response{r.Status, contentType(r, r.Status), [][]byte{body}}
	}
	size := r.ChunkSize
	if size == 0 {
		size = DefaultChunkSize
	}
	var events [][]byte
	add := func(ev anthropic.Event) {
		events = append(events, []byte(fmt.Sprintf("event: %s\ndata: %s\n\n", ev.Type, mustMarshalWire(ev))))
	}
	in, out := anthropicUsage(r.Usage)
	add(anthropic.Event{Type: "message_start", Message: &anthropic.StartMessage{Model: model, Usage: in, Content: []jsontext.Value{}}})
	index := 0
	block := func(start anthropic.ContentBlock, deltas []anthropic.EventDelta) {
		add(anthropic.Event{Type: "content_block_start", Index: &index, ContentBlock: mustMarshalWire(start)})
		for _, d := range deltas {
			add(anthropic.Event{Type: "content_block_delta", Index: &index, Delta: &d})
		}
		add(anthropic.Event{Type: "content_block_stop", Index: &index})
		index++
	}
	if r.Reasoning != "" || r.Signature != "" {
		var ds []anthropic.EventDelta
		for _, p := range split(r.Reasoning, size) {
			ds = append(ds, anthropic.EventDelta{Type: "thinking_delta", Thinking: p})
		}
		ds = append(ds, anthropic.EventDelta{Type: "signature_delta", Signature: r.Signature})
		block(anthropic.ContentBlock{Type: "thinking"}, ds)
	}
	if r.Text != "" {
		var ds []anthropic.EventDelta
		for _, p := range split(r.Text, size) {
			ds = append(ds, anthropic.EventDelta{Type: "text_delta", Text: p})
		}
		block(anthropic.ContentBlock{Type: "text"}, ds)
	}
	for _, tc := range r.ToolCalls {
		var ds []anthropic.EventDelta
		for _, p := range split(tc.Arguments, size) {
			ds = append(ds, anthropic.EventDelta{Type: "input_json_delta", PartialJSON: p})
		}
		block(anthropic.ContentBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: jsontext.Value("{}")}, ds)
	}
	if r.StreamError != "" {
		t := r.StreamErrorType
		if t == "" {
			t = "overloaded_error"
		}
		add(anthropic.Event{Type: "error", Error: &anthropic.APIError{Type: t, Message: r.StreamError}})
		return response{http.StatusOK, "text/event-stream", events}
	}
	if !r.OmitFinish {
		stop := map[string]string{"tool_calls": "tool_use", "stop": "end_turn", "length": "max_tokens"}[finishReason(r)]
		if stop == "" {
			stop = finishReason(r)
		}
		add(anthropic.Event{Type: "message_delta", Delta: &anthropic.EventDelta{StopReason: &stop}, Usage: out})
	}
	add(anthropic.Event{Type: "message_stop"})
	return response{http.StatusOK, "text/event-stream", events}
}

// anthropicUsage splits a scripted usage into message_start's and
// message_delta's: input_tokens exclude the cached prefix.
func anthropicUsage(u *Usage) (start, delta *anthropic.Usage) {
	if u == nil {
		return &anthropic.Usage{InputTokens: new(int64(0)), OutputTokens: new(int64(0))}, &anthropic.Usage{OutputTokens: new(int64(0))}
	}
	var read, write int64
	if u.CachedTokens != nil {
		read = *u.CachedTokens
	}
	if u.CacheWriteTokens != nil {
		write = *u.CacheWriteTokens
	}
	start = &anthropic.Usage{
		InputTokens: new(max(0, u.PromptTokens-read-write)), OutputTokens: new(int64(1)),
		CacheReadInputTokens: &read, CacheCreationInputTokens: &write,
	}
	return start, &anthropic.Usage{OutputTokens: new(u.CompletionTokens)}
}

func anthropicErrorType(status int) string {
	switch status {
	case 529:
		return "overloaded_error"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusBadRequest:
		return "invalid_request_error"
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	}
	return "api_error"
}
