package responses

import "github.com/go-json-experiment/json/jsontext"

// Wire types of the Responses API. Only the fields tiny-go sends or reads
// are declared; unknown fields are ignored. Items tiny-go sends back as the
// model produced them (reasoning, native calls) stay jsontext.Value.

// Request is the body of POST /responses; "input" is written by hand
// after it (see encodeRequest) so raw items are spliced in unchanged.
type Request struct {
	Model             string     `json:"model"`
	Instructions      string     `json:"instructions,omitempty"`
	Tools             []Tool     `json:"tools,omitempty"`
	ToolChoice        string     `json:"tool_choice,omitempty"`
	ParallelToolCalls *bool      `json:"parallel_tool_calls,omitempty"`
	Reasoning         *Reasoning `json:"reasoning,omitempty"`
	MaxOutputTokens   int        `json:"max_output_tokens,omitzero"`
	Store             bool       `json:"store"`
	Stream            bool       `json:"stream"`
	Include           []string   `json:"include,omitempty"`
	PromptCacheKey    string     `json:"prompt_cache_key,omitempty"`
}

// Reasoning is the request's reasoning parameter.
type Reasoning struct {
	Effort  string `json:"effort,omitempty"`
	Summary string `json:"summary,omitempty"`
}

// Tool is a function tool ("strict" is false: tiny-go validates arguments
// itself) or a native one (apply_patch, shell, local_shell: type only).
type Tool struct {
	Type        string         `json:"type"`
	Name        string         `json:"name,omitempty"`
	Description string         `json:"description,omitempty"`
	Parameters  jsontext.Value `json:"parameters,omitempty"`
	Strict      *bool          `json:"strict,omitempty"`
}

// InputMessage is a user or assistant message item of the input.
type InputMessage struct {
	Type    string `json:"type"`
	Role    string `json:"role"`
	Content []Part `json:"content"`
}

// Part is a content part: input_text, input_image, output_text.
type Part struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	ImageURL string `json:"image_url,omitempty"`
}

// FunctionCall is a function_call item as sent back.
type FunctionCall struct {
	Type      string `json:"type"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// FunctionCallOutput is a function_call_output item.
type FunctionCallOutput struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

// ApplyPatchCallOutput is an apply_patch_call_output item.
type ApplyPatchCallOutput struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Status string `json:"status"` // completed or failed
	Output string `json:"output,omitempty"`
}

// ShellCallOutput is a shell_call_output item: one entry per command run.
type ShellCallOutput struct {
	Type   string        `json:"type"`
	CallID string        `json:"call_id"`
	Output []ShellOutput `json:"output"`
}

// ShellOutput is the output of one command of a shell call.
type ShellOutput struct {
	Stdout  string       `json:"stdout"`
	Stderr  string       `json:"stderr"`
	Outcome ShellOutcome `json:"outcome"`
}

// ShellOutcome is {"type":"exit","exit_code":N} or {"type":"timeout"}.
type ShellOutcome struct {
	Type     string `json:"type"`
	ExitCode *int   `json:"exit_code,omitempty"`
}

// LocalShellCallOutput is a local_shell_call_output item; its id is the
// call's call_id.
type LocalShellCallOutput struct {
	Type   string `json:"type"`
	ID     string `json:"id"`
	Output string `json:"output"`
}

// Event is one stream event; members of all types.
type Event struct {
	Type        string         `json:"type"`
	OutputIndex *int           `json:"output_index"`
	Item        jsontext.Value `json:"item"`
	Delta       string         `json:"delta"`
	Response    *Response      `json:"response"`
	// Code and Message are those of an "error" event; some servers nest
	// them in Error instead.
	Code    jsontext.Value `json:"code"`
	Message string         `json:"message"`
	Error   *APIError      `json:"error"`
}

// Response is the response object of the response.* lifecycle events.
type Response struct {
	Model             string            `json:"model"`
	Status            string            `json:"status"`
	Output            []jsontext.Value  `json:"output"`
	Usage             *Usage            `json:"usage"`
	Error             *APIError         `json:"error"`
	IncompleteDetails *IncompleteDetail `json:"incomplete_details"`
}

// IncompleteDetail says why a response is incomplete: max_output_tokens
// or content_filter.
type IncompleteDetail struct {
	Reason string `json:"reason"`
}

// APIError is an error object; Code is a string or a number, kept raw.
type APIError struct {
	Type    string         `json:"type"`
	Code    jsontext.Value `json:"code"`
	Message string         `json:"message"`
}

// Usage is the response's usage.
type Usage struct {
	InputTokens        int64 `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int64 `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int64 `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

// Item is the head of an output item: the members tiny-go reads.
type Item struct {
	Type      string         `json:"type"`
	ID        string         `json:"id"`
	CallID    string         `json:"call_id"`
	Name      string         `json:"name"`
	Arguments string         `json:"arguments"`
	Content   []ItemPart     `json:"content"`
	Action    jsontext.Value `json:"action"`
	Operation jsontext.Value `json:"operation"`
}

// ItemPart is a content part of a message item: output_text or refusal.
type ItemPart struct {
	Type    string `json:"type"`
	Text    string `json:"text"`
	Refusal string `json:"refusal"`
	// Annotations of output_text: url_citation of the web_search tool.
	Annotations []Annotation `json:"annotations"`
}

// Annotation is an annotation of output_text; only url_citation is read.
type Annotation struct {
	Type  string `json:"type"`
	URL   string `json:"url"`
	Title string `json:"title"`
}
