package providertest

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// DefaultChunkSize is the number of runes per streamed piece of text or
// tool arguments when Reply.ChunkSize is zero.
const DefaultChunkSize = 4

// Reply is one scripted answer. The zero Reply streams an empty reply that
// finishes with "stop".
//
// A streamed reply is a sequence of SSE events, in this order: one per
// piece of Text, for each tool call one event with its id and name followed
// by one per piece of its arguments, the stream error (if StreamError), the
// finish event (unless OmitFinish or StreamError), the usage event (if
// Usage), and "data: [DONE]". A JSON, Status or Body reply is a single
// event. Hang and Cut act after the first After events.
type Reply struct {
	// Text is the assistant content, streamed in pieces.
	Text string `json:"text,omitzero"`
	// Reasoning is reasoning text, streamed in pieces before the text
	// (delta.reasoning; an Anthropic thinking block on /messages).
	Reasoning string `json:"reasoning,omitzero"`
	// ReasoningDetails are sent verbatim, each as one chunk's
	// delta.reasoning_details fragment after the reasoning text (in a JSON
	// reply: together as message.reasoning_details).
	ReasoningDetails []jsontext.Value `json:"reasoningDetails,omitzero"`
	// Signature ends the thinking block of Reasoning on /messages.
	Signature string `json:"signature,omitzero"`
	// ChunkSize is the number of runes per piece of Text or arguments.
	ChunkSize int `json:"chunkSize,omitzero"`
	// ToolCalls are streamed after the text, with indices 0, 1, ...
	ToolCalls []ToolCall `json:"toolCalls,omitzero"`
	// FinishReason overrides the default: "tool_calls" when there are tool
	// calls, "stop" otherwise.
	FinishReason string `json:"finishReason,omitzero"`
	// OmitFinish leaves out the finish event; the stream still ends with
	// [DONE].
	OmitFinish bool `json:"omitFinish,omitzero"`
	// Usage is sent in a final chunk with no choices, as with
	// stream_options.include_usage.
	Usage *Usage `json:"usage,omitzero"`
	// StreamError sends an error object inside the stream (OpenRouter
	// style, with finish_reason "error") instead of the finish event.
	StreamError string `json:"streamError,omitzero"`
	// StreamErrorType is the error type of a StreamError on /messages
	// (default overloaded_error).
	StreamErrorType string `json:"streamErrorType,omitzero"`

	// JSON answers with one non-streaming application/json
	// chat.completion body instead of SSE.
	JSON bool `json:"json,omitzero"`
	// Status answers with this HTTP status and Body (by default an OpenAI
	// style error object whose message is "scripted HTTP <status>").
	Status int `json:"status,omitzero"`
	// Body, when set, is sent verbatim instead of the generated reply, with
	// Status (default 200) and ContentType.
	Body string `json:"body,omitzero"`
	// ContentType overrides the Content-Type of a Status or Body reply
	// (default text/event-stream for 200, application/json otherwise).
	ContentType string `json:"contentType,omitzero"`
	// RetryAfter, when set, is sent as the Retry-After header.
	RetryAfter string `json:"retryAfter,omitzero"`

	// Delay waits before the first byte (the response headers). In a
	// script it is a Go duration string such as "250ms".
	Delay time.Duration `json:"delay,omitzero"`
	// Hang stops after After events and keeps the connection open, sending
	// nothing, until the client goes away (see Server.Disconnected). With
	// After 0 not even the headers are sent.
	Hang bool `json:"hang,omitzero"`
	// Cut aborts the connection after After events, leaving the response
	// unfinished (the client sees an unexpected EOF; with After 0 it gets no
	// response at all).
	Cut bool `json:"cut,omitzero"`
	// After is the number of events written before Hang or Cut.
	After int `json:"after,omitzero"`

	// Items are raw output items of a /responses reply (native calls),
	// each sent whole as output_item.added and output_item.done after the
	// tool calls.
	Items []jsontext.Value `json:"items,omitzero"`

	// Handler, when set, answers the request instead; every other field is
	// ignored. It cannot be part of a script file.
	Handler http.HandlerFunc `json:"-"`
}

// ToolCall is a scripted tool call. Arguments is sent as is, so it may be
// invalid JSON.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Usage is the usage object of a reply. Nil pointers leave the field out,
// to exercise the fallbacks of usage normalization.
type Usage struct {
	PromptTokens     int64 `json:"promptTokens"`
	CompletionTokens int64 `json:"completionTokens"`
	// CachedTokens is prompt_tokens_details.cached_tokens.
	CachedTokens *int64 `json:"cachedTokens,omitzero"`
	// CacheWriteTokens is prompt_tokens_details.cache_write_tokens.
	CacheWriteTokens *int64 `json:"cacheWriteTokens,omitzero"`
	// PromptCacheHitTokens is the top-level prompt_cache_hit_tokens
	// (DeepSeek).
	PromptCacheHitTokens *int64 `json:"promptCacheHitTokens,omitzero"`
	// Cost is OpenRouter's usage.cost.
	Cost *float64 `json:"cost,omitzero"`
}

// validate reports a reply that cannot be served.
func (r Reply) validate() error {
	switch {
	case r.ChunkSize < 0:
		return errors.New("chunkSize must not be negative")
	case r.After < 0:
		return errors.New("after must not be negative")
	case r.Hang && r.Cut:
		return errors.New("hang and cut exclude each other")
	case r.Delay < 0:
		return errors.New("delay must not be negative")
	case r.Status != 0 && (r.Status < 200 || r.Status > 599):
		return fmt.Errorf("status %d out of range 200-599", r.Status)
	}
	for i, d := range r.ReasoningDetails {
		if !d.IsValid() {
			return fmt.Errorf("reasoningDetails[%d] is not valid JSON", i)
		}
	}
	return nil
}
