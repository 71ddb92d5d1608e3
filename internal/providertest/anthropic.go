package providertest

import (
	"fmt"
	"net/http"
)

// Replies to a POST to a path ending in /messages are rendered as
// Anthropic's Messages API: an SSE stream of message_start, one content
// block per thinking (Reasoning, ended by Signature), text and tool call,
// message_delta with the stop reason and usage, and message_stop; a
// StreamError is an error event (type StreamErrorType, by default
// overloaded_error) in place of the rest; a Status is an Anthropic error
// body (529 is overloaded_error). Body, JSON, Hang, Cut and Delay work as
// for Chat Completions (JSON is not rendered differently).

type anthropicEvent map[string]any

func anthropicResponse(r Reply, model string) response {
	if r.Body != "" || r.Status == 0 || r.Status == http.StatusOK {
		if r.Body != "" {
			return build(r, model)
		}
	} else {
		body := mustMarshal(anthropicEvent{"type": "error", "error": anthropicEvent{
			"type": anthropicErrorType(r.Status), "message": fmt.Sprintf("scripted HTTP %d", r.Status),
		}})
		return response{r.Status, contentType(r, r.Status), [][]byte{body}}
	}
	size := r.ChunkSize
	if size == 0 {
		size = DefaultChunkSize
	}
	var events [][]byte
	add := func(ev anthropicEvent) {
		events = append(events, []byte(fmt.Sprintf("event: %s\ndata: %s\n\n", ev["type"], mustMarshal(ev))))
	}
	in, out := anthropicUsage(r.Usage)
	add(anthropicEvent{"type": "message_start", "message": anthropicEvent{
		"id": "msg_providertest", "type": "message", "role": "assistant", "model": model,
		"content": []any{}, "stop_reason": nil, "usage": in,
	}})
	index := 0
	block := func(start anthropicEvent, deltas []anthropicEvent) {
		add(anthropicEvent{"type": "content_block_start", "index": index, "content_block": start})
		for _, d := range deltas {
			add(anthropicEvent{"type": "content_block_delta", "index": index, "delta": d})
		}
		add(anthropicEvent{"type": "content_block_stop", "index": index})
		index++
	}
	if r.Reasoning != "" || r.Signature != "" {
		var ds []anthropicEvent
		for _, p := range split(r.Reasoning, size) {
			ds = append(ds, anthropicEvent{"type": "thinking_delta", "thinking": p})
		}
		ds = append(ds, anthropicEvent{"type": "signature_delta", "signature": r.Signature})
		block(anthropicEvent{"type": "thinking", "thinking": ""}, ds)
	}
	if r.Text != "" {
		var ds []anthropicEvent
		for _, p := range split(r.Text, size) {
			ds = append(ds, anthropicEvent{"type": "text_delta", "text": p})
		}
		block(anthropicEvent{"type": "text", "text": ""}, ds)
	}
	for _, tc := range r.ToolCalls {
		var ds []anthropicEvent
		for _, p := range split(tc.Arguments, size) {
			ds = append(ds, anthropicEvent{"type": "input_json_delta", "partial_json": p})
		}
		block(anthropicEvent{"type": "tool_use", "id": tc.ID, "name": tc.Name, "input": anthropicEvent{}}, ds)
	}
	if r.StreamError != "" {
		t := r.StreamErrorType
		if t == "" {
			t = "overloaded_error"
		}
		add(anthropicEvent{"type": "error", "error": anthropicEvent{"type": t, "message": r.StreamError}})
		return response{http.StatusOK, "text/event-stream", events}
	}
	if !r.OmitFinish {
		stop := map[string]string{"tool_calls": "tool_use", "stop": "end_turn", "length": "max_tokens"}[finishReason(r)]
		if stop == "" {
			stop = finishReason(r)
		}
		add(anthropicEvent{"type": "message_delta", "delta": anthropicEvent{"stop_reason": stop, "stop_sequence": nil}, "usage": out})
	}
	add(anthropicEvent{"type": "message_stop"})
	return response{http.StatusOK, "text/event-stream", events}
}

// anthropicUsage splits a scripted usage into message_start's and
// message_delta's: input_tokens exclude the cached prefix.
func anthropicUsage(u *Usage) (start, delta anthropicEvent) {
	if u == nil {
		return anthropicEvent{"input_tokens": 0, "output_tokens": 0}, anthropicEvent{"output_tokens": 0}
	}
	var read, write int64
	if u.CachedTokens != nil {
		read = *u.CachedTokens
	}
	if u.CacheWriteTokens != nil {
		write = *u.CacheWriteTokens
	}
	start = anthropicEvent{
		"input_tokens": max(0, u.PromptTokens-read-write), "output_tokens": 1,
		"cache_read_input_tokens": read, "cache_creation_input_tokens": write,
	}
	return start, anthropicEvent{"output_tokens": u.CompletionTokens}
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
