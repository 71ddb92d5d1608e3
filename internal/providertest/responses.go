package providertest

import (
	"fmt"
	"net/http"

	"github.com/tiny-agent/tiny-go/internal/provider/responses"
)

// Replies to a POST to a path ending in /responses are rendered as
// OpenAI's Responses API, in the provider's own wire types: response.created;
// a reasoning item (Reasoning as summary deltas, Signature as its
// encrypted_content); a message item (Text as output_text deltas, or as a
// refusal part when FinishReason is "refusal"); one function_call item per
// tool call (arguments as deltas); the raw Items; then response.completed,
// or response.incomplete for FinishReason "length" (max_output_tokens) and
// "content_filter". A StreamError is an error event (code StreamErrorType,
// by default server_error) in place of the terminal event.

type rEvent map[string]any

func responsesResponse(r Reply, model string) response {
	if r.Body != "" || r.Status != 0 && r.Status != http.StatusOK {
		return build(r, model)
	}
	size := r.ChunkSize
	if size == 0 {
		size = DefaultChunkSize
	}
	var events [][]byte
	seq := 0
	add := func(ev rEvent) {
		ev["sequence_number"] = seq
		seq++
		events = append(events, []byte(fmt.Sprintf("event: %s\ndata: %s\n\n", ev["type"], mustMarshal(ev))))
	}
	index := 0
	item := func(added, done any, deltas func()) {
		add(rEvent{"type": "response.output_item.added", "output_index": index, "item": added})
		deltas()
		add(rEvent{"type": "response.output_item.done", "output_index": index, "item": done})
		index++
	}
	add(rEvent{"type": "response.created", "response": rEvent{"id": "resp_providertest", "object": "response", "status": "in_progress", "model": model, "output": []any{}}})
	if r.Reasoning != "" || r.Signature != "" {
		item(rEvent{"type": "reasoning", "id": "rs_0", "summary": []any{}},
			rEvent{"type": "reasoning", "id": "rs_0", "summary": []any{rEvent{"type": "summary_text", "text": r.Reasoning}}, "encrypted_content": r.Signature},
			func() {
				for _, p := range split(r.Reasoning, size) {
					add(rEvent{"type": "response.reasoning_summary_text.delta", "item_id": "rs_0", "output_index": index, "summary_index": 0, "delta": p})
				}
			})
	}
	refusal := finishReason(r) == "refusal"
	if r.Text != "" {
		delta, part := "response.output_text.delta", rEvent{"type": "output_text", "text": r.Text, "annotations": []any{}}
		if refusal {
			delta, part = "response.refusal.delta", rEvent{"type": "refusal", "refusal": r.Text}
		}
		item(rEvent{"type": "message", "id": "msg_0", "role": "assistant", "status": "in_progress", "content": []any{}},
			rEvent{"type": "message", "id": "msg_0", "role": "assistant", "status": "completed", "content": []any{part}},
			func() {
				for _, p := range split(r.Text, size) {
					add(rEvent{"type": delta, "item_id": "msg_0", "output_index": index, "content_index": 0, "delta": p})
				}
			})
	}
	for i, tc := range r.ToolCalls {
		id := fmt.Sprintf("fc_%d", i)
		item(responses.FunctionCall{Type: "function_call", CallID: tc.ID, Name: tc.Name},
			responses.FunctionCall{Type: "function_call", CallID: tc.ID, Name: tc.Name, Arguments: tc.Arguments},
			func() {
				for _, p := range split(tc.Arguments, size) {
					add(rEvent{"type": "response.function_call_arguments.delta", "item_id": id, "output_index": index, "delta": p})
				}
			})
	}
	for _, raw := range r.Items {
		item(raw, raw, func() {})
	}
	if r.StreamError != "" {
		code := r.StreamErrorType
		if code == "" {
			code = "server_error"
		}
		add(rEvent{"type": "error", "code": code, "message": r.StreamError, "param": nil})
		return response{http.StatusOK, "text/event-stream", events}
	}
	if !r.OmitFinish {
		add(responsesTerminal(r, model))
	}
	return response{http.StatusOK, "text/event-stream", events}
}

// responsesTerminal is the terminal event of a scripted reply.
func responsesTerminal(r Reply, model string) rEvent {
	resp := rEvent{"id": "resp_providertest", "object": "response", "status": "completed", "model": model, "output": []any{}}
	if u := r.Usage; u != nil {
		var cached int64
		if u.CachedTokens != nil {
			cached = *u.CachedTokens
		}
		resp["usage"] = rEvent{"input_tokens": u.PromptTokens, "input_tokens_details": rEvent{"cached_tokens": cached},
			"output_tokens": u.CompletionTokens, "output_tokens_details": rEvent{"reasoning_tokens": 0}, "total_tokens": u.PromptTokens + u.CompletionTokens}
	}
	typ := "response.completed"
	switch finishReason(r) {
	case "length":
		typ, resp["status"], resp["incomplete_details"] = "response.incomplete", "incomplete", rEvent{"reason": "max_output_tokens"}
	case "content_filter":
		typ, resp["status"], resp["incomplete_details"] = "response.incomplete", "incomplete", rEvent{"reason": "content_filter"}
	}
	return rEvent{"type": typ, "response": resp}
}
