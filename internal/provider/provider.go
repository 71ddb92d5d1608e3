// Package provider defines the model provider interface the agent uses and
// an OpenAI-compatible streaming Chat Completions client.
package provider

import (
	"context"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// Roles of a chat message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one chat message on the wire.
type Message struct {
	Role string
	// Content is nil for an assistant message that only calls tools.
	Content    *string
	ToolCallID string
	ToolCalls  []ToolCall
	// ReasoningDetails are the reasoning_details the provider returned with
	// this assistant message, sent back byte for byte (nil for none).
	ReasoningDetails jsontext.Value
	// Images go with a user message as image parts after its text.
	Images []Image
}

// Image is an image sent with a user message. Data is never changed once
// handed over.
type Image struct {
	MediaType string
	Data      []byte
}

// ToolCall is one function call requested by the model. Arguments is the
// raw string the model produced; it may be invalid JSON.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// ToolDefinition is a function tool offered to the model (not strict).
type ToolDefinition struct {
	Name        string
	Description string
	Parameters  jsontext.Value
}

// Request is one physical model request.
type Request struct {
	Model    string
	Messages []Message // the system message first
	Tools    []ToolDefinition
}

// Usage is normalized as runtime.md section 1 says.
type Usage struct {
	Input, Output, CacheRead, CacheWrite int64
	// PromptTokens is the raw prompt_tokens figure (input plus cache),
	// used to decide automatic compaction.
	PromptTokens int64
	// Cost is the price of the request in US dollars when the provider
	// reported it (OpenRouter usage accounting) or a price table knows it;
	// nil otherwise. Display data only, never part of a fact.
	Cost *float64
	// Reasoning is the part of Output the model spent reasoning, when the
	// provider reports it (display data; Output already includes it).
	Reasoning int64
}

// Finish reasons after normalization.
const (
	FinishStop    = "stop"
	FinishToolUse = "toolUse"
	FinishLength  = "length"
	// FinishRefusal is a reply the model (or the provider's content
	// filter) declined to give; Response.StopDetail names the provider's
	// reason ("refusal", "content_filter"). The agent fails the step with
	// one line saying so; the text streamed before stays on the screen.
	FinishRefusal = "refusal"
	// FinishPause is Anthropic's pause_turn: the Client continues the turn
	// itself by sending the reply back, so a Provider never returns it.
	FinishPause = "pause"
)

// Response is a complete, settled reply. Nothing partial is ever returned
// as a Response.
type Response struct {
	Content *string
	// ToolCalls in the order the model produced them.
	ToolCalls []ToolCall
	// FinishReason is FinishStop, FinishToolUse, FinishLength or
	// FinishRefusal; any other provider value is reported as an *Error
	// instead.
	FinishReason string
	// StopDetail is the provider's own word for a FinishRefusal.
	StopDetail string
	Usage      Usage
	// ReasoningDetails are the reply's reasoning_details (or thinking
	// blocks) as received: a JSON array to send back with this message on
	// every later request; nil when there were none.
	ReasoningDetails jsontext.Value
	// Sources are the web pages the provider's own search cited (or found,
	// when it cited none), for display only: what goes back to the
	// provider is in ReasoningDetails, as it was sent.
	Sources []Source
}

// Source is one web page a reply rests on.
type Source struct {
	Title string
	URL   string
}

// Delta is streamed text, for display only: answer text in Content,
// reasoning (thinking) text in Reasoning.
type Delta struct {
	Content   string
	Reasoning string
	// Retry, when set, announces a wait before the request is sent again
	// (see Retry); Content is then empty.
	Retry *RetryWait
}

// Provider performs one model request. Stream calls onDelta (which may be
// nil) with text as it arrives and returns the settled response, or an error
// (an *Error for provider failures, or ctx.Err() when cancelled). It never
// retries.
type Provider interface {
	Stream(ctx context.Context, req Request, onDelta func(Delta)) (Response, error)
}

// Error kinds. The client produces all of them except KindEmptyResponse and
// KindLength, which are for the agent loop to report replies that arrived
// intact but cannot settle a step.
const (
	KindHTTPStatus              = "http_status"
	KindRateLimited             = "rate_limited"
	KindTimeout                 = "timeout"
	KindConnectionFailed        = "connection_failed"
	KindMalformedResponse       = "malformed_response"
	KindEmptyResponse           = "empty_response"
	KindUnsupportedFinishReason = "unsupported_finish_reason"
	KindLength                  = "length"
	KindResponseTooLarge        = "response_too_large"
	// KindProviderError is an error object the provider sent inside an
	// otherwise successful (HTTP 200) response.
	KindProviderError = "provider_error"
	// KindContextOverflow is an HTTP 400/413 whose error says the prompt is
	// too long for the model's context window: not a failure of the task,
	// the agent compacts and continues (runtime.md §1, §4).
	KindContextOverflow = "context_overflow"
	// KindQuota is an account without credit (insufficient_quota): never
	// retried, the message says to check billing.
	KindQuota = "insufficient_quota"
)

// Error is a provider failure with a short, safe reason (no response body,
// never the API key) suitable for stepFailed.message.
type Error struct {
	// Kind is a bounded machine-readable class, one of the Kind constants.
	Kind    string
	Message string
	Status  int // HTTP status when Kind is http_status or rate_limited
	// Retryable is true only when no reply came back: the connection was
	// refused or reset before any response byte, or the server answered
	// 408, 429, 500, 502, 503, 504 or 529 (overloaded) before any streamed
	// event. Such a request may be sent again inside the same attempt.
	Retryable bool
	// RetryAfter is the server's Retry-After (seconds or HTTP date), else 0.
	RetryAfter time.Duration
	// Usage is what a reply that failed or was cut off reported it had
	// used: the provider bills it, so the agent records it (nil: none).
	Usage *Usage
}

func (e *Error) Error() string { return e.Message }
