package providertest

import (
	"fmt"
	"net/http"

	"github.com/go-json-experiment/json/jsontext"

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

func responsesResponse(r Reply, model string) response {
	if r.Body != "" || r.Status != 0 && r.Status != http.StatusOK {
		return build(r, model)
	}
	size := r.ChunkSize
	if size == 0 {
		size = DefaultChunkSize
	}
	var events [][]byte
	add := func(ev responses.Event) {
		events = append(events, []byte(fmt.Sprintf("event: %s\ndata: %s\n\n", ev.Type, mustMarshalWire(ev))))
	}
	index := 0
	item := func(added, done any, deltas func(index *int)) {
		add(responses.Event{Type: "response.output_item.added", OutputIndex: &index, Item: mustMarshal(added)})
		deltas(&index)
		add(responses.Event{Type: "response.output_item.done", OutputIndex: &index, Item: mustMarshal(done)})
		index++
	}
	add(responses.Event{Type: "response.created", Response: &responses.Response{Status: "in_progress", Model: model, Output: []jsontext.Value{}}})
	if r.Reasoning != "" || r.Signature != "" {
		item(rItem{"type": "reasoning", "id": "rs_0", "summary": []any{}},
			rItem{"type": "reasoning", "id": "rs_0", "summary": []any{rItem{"type": "summary_text", "text": r.Reasoning}}, "encrypted_content": r.Signature},
			func(index *int) {
				for _, p := range split(r.Reasoning, size) {
					add(responses.Event{Type: "response.reasoning_summary_text.delta", OutputIndex: index, Delta: p})
				}
			})
	}
	refusal := finishReason(r) == "refusal"
	if r.Text != "" {
		delta, part := "response.output_text.delta", rItem{"type": "output_text", "text": r.Text, "annotations": []any{}}
		if refusal {
			delta, part = "response.refusal.delta", rItem{"type": "refusal", "refusal": r.Text}
		}
		item(rItem{"type": "message", "id": "msg_0", "role": "assistant", "status": "in_progress", "content": []any{}},
			rItem{"type": "message", "id": "msg_0", "role": "assistant", "status": "completed", "content": []any{part}},
			func(index *int) {
				for _, p := range split(r.Text, size) {
					add(responses.Event{Type: delta, OutputIndex: index, Delta: p})
				}
			})
	}
	for _, tc := range r.ToolCalls {
		item(responses.FunctionCall{Type: "function_call", CallID: tc.ID, Name: tc.Name},
			responses.FunctionCall{Type: "function_call", CallID: tc.ID, Name: tc.Name, Arguments: tc.Arguments},
			func(index *int) {
				for _, p := range split(tc.Arguments, size) {
					add(responses.Event{Type: "response.function_call_arguments.delta", OutputIndex: index, Delta: p})
				}
			})
	}
	for _, raw := range r.Items {
		item(raw, raw, func(*int) {})
	}
	if r.StreamError != "" {
		code := r.StreamErrorType
		if code == "" {
			code = "server_error"
		}
		add(responses.Event{Type: "error", Code: mustMarshal(code), Message: r.StreamError})
		return response{http.StatusOK, "text/event-stream", events}
	}
	if !r.OmitFinish {
		add(responsesTerminal(r, model))
	}
	return response{http.StatusOK, "text/event-stream", events}
}

// rItem is an output item as the model produced it: the decoder keeps
// reasoning and message items raw, and they go back as they came.
type rItem map[string]any

// responsesTerminal is the terminal event of a scripted reply.
func responsesTerminal(r Reply, model string) responses.Event {
	resp := &responses.Response{Status: "completed", Model: model, Output: []jsontext.Value{}}
	if u := r.Usage; u != nil {
		resp.Usage = &responses.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
		if u.CachedTokens != nil {
			resp.Usage.InputTokensDetails.CachedTokens = *u.CachedTokens
		}
	}
	typ := "response.completed"
	switch reason := finishReason(r); reason {
	case "length", "content_filter":
		if reason == "length" {
			reason = "max_output_tokens"
		}
		typ, resp.Status, resp.IncompleteDetails = "response.incomplete", "incomplete", &responses.IncompleteDetail{Reason: reason}
	}
	return responses.Event{Type: typ, Response: resp}
}
