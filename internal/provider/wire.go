package provider

import "github.com/go-json-experiment/json/jsontext"

// Wire types of the OpenAI Chat Completions API. Only the fields tiny-go
// sends or reads are declared; unknown response fields are ignored. They
// are exported for the scripted server of tests (internal/providertest),
// which decodes the requests it records and encodes its replies with them,
// so that the two cannot drift; the omitzero tags of the reply types are
// for its encoding.

// ChatRequest is the request body. requestEncoder writes its fields piece
// by piece, in this order, to reuse the encoding of repeated messages.
type ChatRequest struct {
	Model         string            `json:"model"`
	Messages      []ChatMessage     `json:"messages"`
	Tools         []ChatTool        `json:"tools,omitempty"`
	Reasoning     *ChatReasoning    `json:"reasoning,omitempty"`
	Usage         *ChatUsageOption  `json:"usage,omitempty"`
	CacheControl  *ChatCacheControl `json:"cache_control,omitempty"`
	Plugins       []ChatPlugin      `json:"plugins,omitempty"`
	Stream        bool              `json:"stream"`
	StreamOptions ChatStreamOptions `json:"stream_options"`
}

// ChatPlugin is an OpenRouter plugin ({"id":"web"}: web search).
type ChatPlugin struct {
	ID string `json:"id"`
}

// ChatReasoning is OpenRouter's reasoning parameter.
type ChatReasoning struct {
	Effort string `json:"effort"`
}

// ChatUsageOption asks OpenRouter for usage accounting (the cost).
type ChatUsageOption struct {
	Include bool `json:"include"`
}

// ChatCacheControl marks a prompt-cache breakpoint: on the request it asks
// for automatic caching (the breakpoint moves to the last cacheable block),
// on a content part it is an explicit breakpoint.
type ChatCacheControl struct {
	Type string `json:"type"`
}

// ChatTextPart is a text content part, used for the system prompt when it
// carries a cache breakpoint.
type ChatTextPart struct {
	Type         string            `json:"type"`
	Text         string            `json:"text"`
	CacheControl *ChatCacheControl `json:"cache_control,omitempty"`
}

// ChatImagePart is an image content part of a user message (a data URL).
type ChatImagePart struct {
	Type     string       `json:"type"`
	ImageURL ChatImageURL `json:"image_url"`
}

// ChatImageURL is the image of a ChatImagePart.
type ChatImageURL struct {
	URL string `json:"url"`
}

// ChatStreamOptions asks for the usage chunk at the end of a stream.
type ChatStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// ChatMessage is a message of a request.
type ChatMessage struct {
	Role string `json:"role"`
	// Content is always present: a *string, null for an assistant message
	// that only calls tools, as the API expects; or content parts
	// (ChatTextPart, ChatImagePart). messageJSON splices reasoning_details
	// in after the members.
	Content    any            `json:"content"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	ToolCalls  []ChatToolCall `json:"tool_calls,omitempty"`
}

// ChatToolCall is a tool call of an assistant message in a request.
type ChatToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function ChatFunction `json:"function"`
}

// ChatFunction is the called function of a ChatToolCall.
type ChatFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ChatTool deliberately has no "strict" field: tiny-go validates arguments
// itself and strict mode rejects many ordinary JSON schemas.
type ChatTool struct {
	Type     string      `json:"type"`
	Function ChatToolDef `json:"function"`
}

// ChatToolDef is the function a ChatTool defines.
type ChatToolDef struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  jsontext.Value `json:"parameters"`
}

// emptySchema is sent for a tool without a parameter schema; the API
// requires an object schema.
const emptySchema = `{"type":"object","properties":{}}`

// ChatChunk is one streamed chat.completion.chunk, or a whole
// non-streaming chat.completion (which carries Message instead of Delta).
type ChatChunk struct {
	Choices []ChatChoice `json:"choices"`
	Usage   *ChatUsage   `json:"usage,omitzero"`
	Error   *ChatError   `json:"error,omitzero"`
}

// ChatChoice is a choice of a chunk; tiny-go asks for one.
type ChatChoice struct {
	Index        int        `json:"index"`
	Delta        *ChatDelta `json:"delta,omitzero"`
	Message      *ChatDelta `json:"message,omitzero"`
	FinishReason *string    `json:"finish_reason"`
}

// ChatDelta is the delta of a streamed choice or the message of a whole
// reply.
type ChatDelta struct {
	Content   *string             `json:"content,omitzero"`
	ToolCalls []ChatToolCallDelta `json:"tool_calls,omitzero"`
	// Reasoning is OpenRouter's reasoning text, ReasoningContent the same
	// from DeepSeek-style servers; both are for display only.
	Reasoning        *string `json:"reasoning,omitzero"`
	ReasoningContent *string `json:"reasoning_content,omitzero"`
	// ReasoningDetails is kept raw: a fragment array in a stream, the
	// array to send back in a whole message.
	ReasoningDetails jsontext.Value `json:"reasoning_details,omitzero"`
	// Refusal is OpenAI's refusal text (in place of content), shown and
	// kept as the reply's text; the reply is then a FinishRefusal.
	Refusal *string `json:"refusal,omitzero"`
	// Annotations are OpenRouter's url_citation annotations of the web
	// plugin, each kept raw.
	Annotations []jsontext.Value `json:"annotations,omitzero"`
}

// ChatToolCallDelta is a fragment of a streamed tool call, or a whole
// tool call of a message.
type ChatToolCallDelta struct {
	// Index is absent from some servers' replies; see accumulator.addToolCallDelta.
	Index    *int              `json:"index,omitzero"`
	ID       string            `json:"id,omitzero"`
	Function ChatFunctionDelta `json:"function"`
}

// ChatFunctionDelta is the function of a ChatToolCallDelta: the name in
// its first fragment, the arguments in pieces.
type ChatFunctionDelta struct {
	Name      string `json:"name,omitzero"`
	Arguments string `json:"arguments"`
}

// ChatUsage uses pointers where runtime.md distinguishes a missing field
// from zero (the cache-read fallback).
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
