package provider

import "github.com/go-json-experiment/json/jsontext"

// Wire types of the OpenAI Chat Completions API. Only the fields tiny-go
// sends or reads are declared; unknown response fields are ignored.

// wireRequest is the request body. requestEncoder writes its fields piece
// by piece, in this order, to reuse the encoding of repeated messages.
type wireRequest struct {
	Model         string            `json:"model"`
	Messages      []wireMessage     `json:"messages"`
	Tools         []wireTool        `json:"tools,omitempty"`
	Reasoning     *wireReasoning    `json:"reasoning,omitempty"`
	Usage         *wireUsageOption  `json:"usage,omitempty"`
	CacheControl  *wireCacheControl `json:"cache_control,omitempty"`
	Stream        bool              `json:"stream"`
	StreamOptions wireStreamOptions `json:"stream_options"`
}

// wireReasoning is OpenRouter's reasoning parameter.
type wireReasoning struct {
	Effort string `json:"effort"`
}

// wireUsageOption asks OpenRouter for usage accounting (the cost).
type wireUsageOption struct {
	Include bool `json:"include"`
}

// wireCacheControl marks a prompt-cache breakpoint: on the request it asks
// for automatic caching (the breakpoint moves to the last cacheable block),
// on a content part it is an explicit breakpoint.
type wireCacheControl struct {
	Type string `json:"type"`
}

// wireTextPart is a text content part, used for the system prompt when it
// carries a cache breakpoint.
type wireTextPart struct {
	Type         string            `json:"type"`
	Text         string            `json:"text"`
	CacheControl *wireCacheControl `json:"cache_control,omitempty"`
}

// wireImagePart is an image content part of a user message (a data URL).
type wireImagePart struct {
	Type     string       `json:"type"`
	ImageURL wireImageURL `json:"image_url"`
}

type wireImageURL struct {
	URL string `json:"url"`
}

type wireStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireMessage struct {
	Role string `json:"role"`
	// Content is always present: a *string, null for an assistant message
	// that only calls tools, as the API expects; or []wireTextPart.
	Content    any            `json:"content"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
}

type wireToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// wireTool deliberately has no "strict" field: tiny-go validates arguments
// itself and strict mode rejects many ordinary JSON schemas.
type wireTool struct {
	Type     string      `json:"type"`
	Function wireToolDef `json:"function"`
}

type wireToolDef struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  jsontext.Value `json:"parameters"`
}

// emptySchema is sent for a tool without a parameter schema; the API
// requires an object schema.
const emptySchema = `{"type":"object","properties":{}}`

// wireChunk is one streamed chat.completion.chunk, or a whole
// non-streaming chat.completion (which carries Message instead of Delta).
type wireChunk struct {
	Choices []wireChoice `json:"choices"`
	Usage   *ChatUsage   `json:"usage"`
	Error   *ChatError   `json:"error"`
}

type wireChoice struct {
	Index        int        `json:"index"`
	Delta        *wireDelta `json:"delta"`
	Message      *wireDelta `json:"message"`
	FinishReason *string    `json:"finish_reason"`
}

type wireDelta struct {
	Content   *string             `json:"content"`
	ToolCalls []wireToolCallDelta `json:"tool_calls"`
	// Reasoning is OpenRouter's reasoning text, ReasoningContent the same
	// from DeepSeek-style servers; both are for display only.
	Reasoning        *string `json:"reasoning"`
	ReasoningContent *string `json:"reasoning_content"`
	// ReasoningDetails is kept raw: a fragment array in a stream, the
	// array to send back in a whole message.
	ReasoningDetails jsontext.Value `json:"reasoning_details"`
	// Refusal is OpenAI's refusal text (in place of content), shown and
	// kept as the reply's text; the reply is then a FinishRefusal.
	Refusal *string `json:"refusal"`
}

type wireToolCallDelta struct {
	// Index is absent from some servers' replies; see accumulator.toolCall.
	Index    *int              `json:"index"`
	ID       string            `json:"id"`
	Function wireFunctionDelta `json:"function"`
}

type wireFunctionDelta struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ChatUsage uses pointers where runtime.md distinguishes a missing field
// from zero (the cache-read fallback). ChatUsage, ChatPromptDetails and
// ChatError are exported for the scripted server of tests
// (internal/providertest), which writes its replies with them; omitzero
// is for its encoding.
type ChatUsage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	// TotalTokens is sent by every server and not read.
	TotalTokens          int64              `json:"total_tokens"`
	PromptTokensDetails  *ChatPromptDetails `json:"prompt_tokens_details,omitzero"`
	PromptCacheHitTokens *int64             `json:"prompt_cache_hit_tokens,omitzero"`
	// Cost is OpenRouter's usage accounting, in credits (US dollars).
	Cost *float64 `json:"cost,omitzero"`
}

// ChatPromptDetails is usage.prompt_tokens_details.
type ChatPromptDetails struct {
	CachedTokens     *int64 `json:"cached_tokens,omitzero"`
	CacheWriteTokens int64  `json:"cache_write_tokens,omitzero"`
}

// ChatError is the error object of an error response body or of an error
// event inside a stream. Code is a number or a string depending on the
// server, so it is kept raw.
type ChatError struct {
	Message string         `json:"message"`
	Code    jsontext.Value `json:"code"`
}

// normalize applies runtime.md section 1.
func (u *ChatUsage) normalize() Usage {
	if u == nil {
		return Usage{}
	}
	var cacheRead, cacheWrite int64
	switch {
	case u.PromptTokensDetails != nil && u.PromptTokensDetails.CachedTokens != nil:
		cacheRead = *u.PromptTokensDetails.CachedTokens
	case u.PromptCacheHitTokens != nil:
		cacheRead = *u.PromptCacheHitTokens
	}
	if u.PromptTokensDetails != nil {
		cacheWrite = u.PromptTokensDetails.CacheWriteTokens
	}
	return Usage{
		Input:        max(0, u.PromptTokens-cacheRead-cacheWrite),
		Output:       u.CompletionTokens,
		CacheRead:    cacheRead,
		CacheWrite:   cacheWrite,
		PromptTokens: u.PromptTokens,
		Cost:         u.Cost,
	}
}
