package providertest

import (
	"net/http"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/provider"
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

// ChatRequest is a chat completions request as sent, decoded with the
// provider's own wire type; its messages are Messages.
type ChatRequest struct {
	provider.ChatRequest
	Messages []Message `json:"messages"`
}

// Message is a message of a request: the provider's wire message and what
// its type cannot show. Content is nil when the client sent null or left
// it out; content sent as an array of parts has their text joined into
// Content and is in ContentParts too. RawContent and ReasoningDetails are
// as sent.
type Message struct {
	provider.ChatMessage
	Content          *string        `json:"-"`
	ContentParts     jsontext.Value `json:"-"`
	RawContent       jsontext.Value `json:"content"`
	ReasoningDetails jsontext.Value `json:"reasoning_details"`
}

// UnmarshalJSON decodes a message, accepting string or text-part content.
func (m *Message) UnmarshalJSON(b []byte) error {
	type plain Message
	*m = Message{}
	if err := json.Unmarshal(b, (*plain)(m)); err != nil {
		return err
	}
	switch m.RawContent.Kind() {
	case '"':
		m.Content = new(string)
		return json.Unmarshal(m.RawContent, m.Content)
	case '[':
		var parts []provider.ChatTextPart
		if err := json.Unmarshal(m.RawContent, &parts); err != nil {
			return err
		}
		var s strings.Builder
		for _, p := range parts {
			s.WriteString(p.Text)
		}
		m.Content, m.ContentParts = new(s.String()), m.RawContent
	}
	return nil
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
