package anthropic

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/provider"
)

// Thinking budgets of the reasoning efforts, in tokens (Anthropic's
// minimum is 1024).
var thinkingBudget = map[string]int{
	provider.ReasoningLow:    4096,
	provider.ReasoningMedium: 12000,
	provider.ReasoningHigh:   20000, // + DefaultMaxTokens stays under Opus 4's 32000 output limit
}

// request is the Messages API body. Members are in the order of
// Anthropic's cache prefix (tools, system, messages) after the parameters,
// so the body grows at its end from one step to the next.
type request struct {
	Model     string    `json:"model"`
	MaxTokens int       `json:"max_tokens"`
	Thinking  *thinking `json:"thinking,omitempty"`
	Tools     []tool    `json:"tools,omitempty"`
	System    []block   `json:"system,omitempty"`
	// "messages" (raw turns) and "stream":true follow; see encodeRequest.
}

type thinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

// tool is a tool definition: a client tool (name, description, schema)
// or a server tool (type, name, max_uses).
type tool struct {
	Type         string         `json:"type,omitempty"`
	Name         string         `json:"name"`
	Description  string         `json:"description,omitempty"`
	InputSchema  jsontext.Value `json:"input_schema,omitzero"`
	MaxUses      int            `json:"max_uses,omitempty"`
	CacheControl *cacheControl  `json:"cache_control,omitempty"`
}

type cacheControl struct {
	Type string `json:"type"`
}

var ephemeral = &cacheControl{Type: "ephemeral"}

// block is a content block tiny-go writes. Input and Content are raw.
type block struct {
	Type         string         `json:"type"`
	Text         string         `json:"text,omitempty"`
	ID           string         `json:"id,omitempty"`
	Name         string         `json:"name,omitempty"`
	Input        jsontext.Value `json:"input,omitempty"`
	ToolUseID    string         `json:"tool_use_id,omitempty"`
	Content      *string        `json:"content,omitempty"`
	Source       *imageSource   `json:"source,omitempty"`
	CacheControl *cacheControl  `json:"cache_control,omitempty"`
}

// imageSource is the base64 source of an image block.
type imageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

// message is one turn: blocks tiny-go writes after the raw thinking
// blocks of ReasoningDetails.
type message struct {
	role     string
	thinking []jsontext.Value
	blocks   []block
}

// modelName is the Messages API model id: OpenRouter-style ids such as
// "anthropic/claude-sonnet-4" name the same model.
func modelName(model string) string { return strings.TrimPrefix(model, "anthropic/") }

// encodeRequest converts req; webSearch offers the web_search server tool
// (search.go) after the client tools. Cache breakpoints: the last tool definition
// and the system prompt (stable), and the last block of the conversation
// (moving: Anthropic reads the longest cached prefix up to it, and a
// breakpoint does not change the cached content).
func encodeRequest(req provider.Request, effort string, maxTokens int, webSearch bool) ([]byte, error) {
	r := request{Model: modelName(req.Model), MaxTokens: maxTokens}
	if budget := thinkingBudget[effort]; budget > 0 {
		r.Thinking = &thinking{Type: "enabled", BudgetTokens: budget}
		if r.MaxTokens == 0 {
			r.MaxTokens = budget + DefaultMaxTokens
		}
	}
	if r.MaxTokens == 0 {
		r.MaxTokens = DefaultMaxTokens
	}
	for _, t := range req.Tools {
		schema := t.Parameters
		if len(schema) == 0 {
			schema = jsontext.Value(`{"type":"object","properties":{}}`)
		}
		r.Tools = append(r.Tools, tool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	if webSearch {
		r.Tools = append(r.Tools, webSearchTool())
	}
	if n := len(r.Tools); n > 0 {
		r.Tools[n-1].CacheControl = ephemeral
	}
	msgs, system := convert(req.Messages)
	if system != "" {
		r.System = []block{{Type: "text", Text: system, CacheControl: ephemeral}}
	}
	if len(msgs) == 0 {
		return nil, errors.New("an Anthropic request needs at least one message")
	}
	last := &msgs[len(msgs)-1]
	if n := len(last.blocks); n > 0 {
		last.blocks[n-1].CacheControl = ephemeral
	}
	head, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	// The turns are appended by hand: an encoder would normalize the raw
	// thinking blocks and tool inputs.
	body := append(head[:len(head)-1], `,"messages":[`...)
	for i, m := range msgs {
		if i > 0 {
			body = append(body, ',')
		}
		if body, err = m.appendTo(body); err != nil {
			return nil, err
		}
	}
	return append(body, `],"stream":true}`...), nil
}

// convert turns the OpenAI-shaped messages into turns: system messages
// into the system prompt, tool results into tool_result blocks of a user
// turn, and consecutive turns of one role into one turn (the API wants
// them alternating).
func convert(in []provider.Message) ([]message, string) {
	var out []message
	var system []string
	turn := func(role string) *message {
		if n := len(out); n > 0 && out[n-1].role == role {
			return &out[n-1]
		}
		out = append(out, message{role: role})
		return &out[len(out)-1]
	}
	for _, m := range in {
		switch m.Role {
		case provider.RoleSystem:
			if m.Content != nil {
				system = append(system, *m.Content)
			}
		case provider.RoleUser:
			if m.Content != nil && *m.Content != "" {
				t := turn("user")
				// Images first, as Anthropic advises, then the text that
				// names them.
				for _, img := range m.Images {
					t.blocks = append(t.blocks, block{Type: "image", Source: &imageSource{Type: "base64", MediaType: img.MediaType, Data: base64.StdEncoding.EncodeToString(img.Data)}})
				}
				t.blocks = append(t.blocks, block{Type: "text", Text: *m.Content})
			}
		case provider.RoleTool:
			t := turn("user")
			content := ""
			if m.Content != nil {
				content = *m.Content
			}
			t.blocks = append(t.blocks, block{Type: "tool_result", ToolUseID: m.ToolCallID, Content: &content})
		case provider.RoleAssistant:
			t := turn("assistant")
			raw, whole := replayBlocks(m.ReasoningDetails)
			if whole && len(t.blocks) == 0 {
				// The reply kept whole: its blocks as they came.
				t.thinking = append(t.thinking, raw...)
				continue
			}
			if len(t.blocks) == 0 && !whole {
				t.thinking = append(t.thinking, raw...)
			}
			if m.Content != nil && *m.Content != "" {
				t.blocks = append(t.blocks, block{Type: "text", Text: *m.Content})
			}
			for _, c := range m.ToolCalls {
				t.blocks = append(t.blocks, block{Type: "tool_use", ID: c.ID, Name: c.Name, Input: toolInput(c.Arguments)})
			}
		}
	}
	return out, strings.Join(system, "\n\n")
}

// toolInput is the input object of a tool call: the model's arguments as
// they were (a reply of this API always has an object). Arguments that are
// not an object, which only another provider's reply could leave, are
// sent as an empty input; their call already has a synthetic result.
func toolInput(args string) jsontext.Value {
	v := jsontext.Value(args)
	if v.IsValid() && v.Kind() == '{' {
		return bytes.Clone(v)
	}
	return jsontext.Value(`{}`)
}

// encode writes the turn; thinking blocks and tool inputs are spliced in
// raw, since signatures are checked byte for byte.
func (m message) appendTo(b []byte) ([]byte, error) {
	b = append(b, `{"role":`...)
	b, _ = jsontext.AppendQuote(b, m.role)
	b = append(b, `,"content":[`...)
	n := 0
	for _, t := range m.thinking {
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, t...)
		n++
	}
	for _, bl := range m.blocks {
		input := bl.Input
		bl.Input = nil
		enc, err := json.Marshal(bl)
		if err != nil {
			return nil, err
		}
		if input != nil {
			enc = append(enc[:len(enc)-1], `,"input":`...)
			enc = append(append(enc, input...), '}')
		}
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, enc...)
		n++
	}
	return append(b, "]}"...), nil
}
