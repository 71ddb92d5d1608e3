package providertest

import (
	"net/http"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Request is a request the server received, recorded before it was
// answered.
type Request struct {
	Method string
	// Path is the URL path, RawQuery the query string.
	Path     string
	RawQuery string
	Header   http.Header
	Body     []byte
	// Chat is Body decoded; DecodeError is set instead when it does not
	// decode as a chat completions request.
	Chat        ChatRequest
	DecodeError string
	// Disconnected reports that the client went away before the reply was
	// complete.
	Disconnected bool
}

// ChatRequest is the wire shape of a chat completions request, as sent.
type ChatRequest struct {
	Model         string         `json:"model"`
	Messages      []Message      `json:"messages"`
	Tools         []Tool         `json:"tools"`
	Stream        bool           `json:"stream"`
	StreamOptions *StreamOptions `json:"stream_options"`
	// Reasoning, Usage and CacheControl are OpenRouter's members, raw;
	// nil when absent.
	Reasoning    jsontext.Value `json:"reasoning"`
	Usage        jsontext.Value `json:"usage"`
	CacheControl jsontext.Value `json:"cache_control"`
}

// StreamOptions is the stream_options object.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// Message is one message of a request. Content is nil when the client sent
// null or left it out; content sent as an array of text parts is joined
// into Content and kept raw in ContentParts. ReasoningDetails are raw as
// sent.
type Message struct {
	Role             string            `json:"role"`
	Content          *string           `json:"-"`
	ContentParts     jsontext.Value    `json:"-"`
	ToolCallID       string            `json:"tool_call_id"`
	ToolCalls        []RequestToolCall `json:"tool_calls"`
	ReasoningDetails jsontext.Value    `json:"reasoning_details"`
	RawContent       jsontext.Value    `json:"content"`
}

// UnmarshalJSON decodes a message, accepting string or text-part content.
func (m *Message) UnmarshalJSON(b []byte) error {
	type plain Message
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*m = Message(p)
	switch m.RawContent.Kind() {
	case '"':
		var s string
		if err := json.Unmarshal(m.RawContent, &s); err != nil {
			return err
		}
		m.Content = &s
	case '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(m.RawContent, &parts); err != nil {
			return err
		}
		var s string
		for _, p := range parts {
			s += p.Text
		}
		m.Content, m.ContentParts = &s, m.RawContent
	}
	return nil
}

// RequestToolCall is a tool call of an assistant message in a request.
type RequestToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Tool is a tool definition of a request. Strict is nil unless the client
// sent "strict".
type Tool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Parameters  jsontext.Value `json:"parameters"`
		Strict      *bool          `json:"strict"`
	} `json:"function"`
}

// decodeChat decodes a request body. Whether "content" was null or absent
// is visible only in the raw body.
func decodeChat(body []byte) (ChatRequest, string) {
	var c ChatRequest
	if err := json.Unmarshal(body, &c); err != nil {
		return ChatRequest{}, err.Error()
	}
	return c, ""
}
