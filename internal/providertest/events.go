package providertest

import (
	"bytes"
	"fmt"
	"net/http"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/provider"
)

// Wire types of the replies the server writes: the provider's own
// (provider.ChatUsage, provider.ChatError) for what its decoder reads, and
// the envelope of a chunk, which it does not.

type chunk struct {
	ID      string              `json:"id"`
	Object  string              `json:"object"`
	Created int64               `json:"created"`
	Model   string              `json:"model"`
	Choices []chunkChoice       `json:"choices"`
	Usage   *provider.ChatUsage `json:"usage,omitzero"`
	Error   *provider.ChatError `json:"error,omitzero"`
}

type chunkChoice struct {
	Index        int      `json:"index"`
	Delta        *delta   `json:"delta,omitzero"`
	Message      *message `json:"message,omitzero"`
	FinishReason *string  `json:"finish_reason"`
}

type delta struct {
	Role      string     `json:"role,omitzero"`
	Reasoning *string    `json:"reasoning,omitzero"`
	Content   *string    `json:"content,omitzero"`
	ToolCalls []wireCall `json:"tool_calls,omitzero"`
}

type message struct {
	Role      string     `json:"role"`
	Content   *string    `json:"content"`
	ToolCalls []wireCall `json:"tool_calls,omitzero"`
}

type wireCall struct {
	Index    *int     `json:"index,omitzero"`
	ID       string   `json:"id,omitzero"`
	Type     string   `json:"type,omitzero"`
	Function wireFunc `json:"function"`
}

type wireFunc struct {
	Name      string `json:"name,omitzero"`
	Arguments string `json:"arguments"`
}

// response is what a reply writes: a status, a content type and the
// events (pieces of the body) between which it may hang or cut.
type response struct {
	status      int
	contentType string
	events      [][]byte
}

func build(r Reply, model string) response {
	switch {
	case r.Body != "":
		status := r.Status
		if status == 0 {
			status = http.StatusOK
		}
		return response{status, contentType(r, status), [][]byte{[]byte(r.Body)}}
	case r.Status != 0 && r.Status != http.StatusOK:
		body := mustMarshal(struct {
			Error provider.ChatError `json:"error"`
		}{provider.ChatError{Message: fmt.Sprintf("scripted HTTP %d", r.Status), Code: mustMarshal(r.Status)}})
		return response{r.Status, contentType(r, r.Status), [][]byte{body}}
	case r.JSON:
		return response{http.StatusOK, "application/json", [][]byte{jsonReply(r, model)}}
	}
	return response{http.StatusOK, "text/event-stream", sseEvents(r, model)}
}

func contentType(r Reply, status int) string {
	switch {
	case r.ContentType != "":
		return r.ContentType
	case status == http.StatusOK:
		return "text/event-stream"
	}
	return "application/json"
}

func finishReason(r Reply) string {
	switch {
	case r.FinishReason != "":
		return r.FinishReason
	case len(r.ToolCalls) > 0:
		return "tool_calls"
	}
	return "stop"
}

func sseEvents(r Reply, model string) [][]byte {
	size := r.ChunkSize
	if size == 0 {
		size = DefaultChunkSize
	}
	var events [][]byte
	add := func(c chunk) {
		c.ID, c.Object, c.Model = "chatcmpl-providertest", "chat.completion.chunk", model
		if c.Choices == nil {
			c.Choices = []chunkChoice{}
		}
		events = append(events, sseData(mustMarshal(c)))
	}
	role := "assistant"
	for _, piece := range split(r.Reasoning, size) {
		add(chunk{Choices: []chunkChoice{{Delta: &delta{Role: role, Reasoning: &piece}}}})
		role = ""
	}
	for _, d := range r.ReasoningDetails {
		// Spliced in by hand: the encoder would normalize the raw bytes
		// the client must send back unchanged.
		c := mustMarshal(chunk{ID: "chatcmpl-providertest", Object: "chat.completion.chunk", Model: model,
			Choices: []chunkChoice{{Delta: &delta{Role: role, Content: new(string)}}}})
		c = bytes.Replace(c, []byte(`"content":""`), append(append([]byte(`"reasoning_details":[`), d...), ']'), 1)
		events = append(events, sseData(c))
		role = ""
	}
	for _, piece := range split(r.Text, size) {
		add(chunk{Choices: []chunkChoice{{Delta: &delta{Role: role, Content: &piece}}}})
		role = ""
	}
	for i, tc := range r.ToolCalls {
		add(chunk{Choices: []chunkChoice{{Delta: &delta{Role: role, ToolCalls: []wireCall{{
			Index: &i, ID: tc.ID, Type: "function", Function: wireFunc{Name: tc.Name},
		}}}}}})
		role = ""
		for _, piece := range split(tc.Arguments, size) {
			add(chunk{Choices: []chunkChoice{{Delta: &delta{ToolCalls: []wireCall{{
				Index: &i, Function: wireFunc{Arguments: piece},
			}}}}}})
		}
	}
	switch {
	case r.StreamError != "":
		reason := "error"
		add(chunk{
			Error:   &provider.ChatError{Message: r.StreamError, Code: mustMarshal(http.StatusBadGateway)},
			Choices: []chunkChoice{{Delta: &delta{}, FinishReason: &reason}},
		})
	case !r.OmitFinish:
		reason := finishReason(r)
		add(chunk{Choices: []chunkChoice{{Delta: &delta{}, FinishReason: &reason}}})
	}
	if r.Usage != nil {
		add(chunk{Usage: r.Usage.wire()})
	}
	return append(events, sseData([]byte("[DONE]")))
}

func jsonReply(r Reply, model string) []byte {
	m := &message{Role: "assistant"}
	if r.Text != "" {
		m.Content = &r.Text
	}
	for _, tc := range r.ToolCalls {
		m.ToolCalls = append(m.ToolCalls, wireCall{ID: tc.ID, Type: "function", Function: wireFunc{Name: tc.Name, Arguments: tc.Arguments}})
	}
	c := chunk{ID: "chatcmpl-providertest", Object: "chat.completion", Model: model}
	if !r.OmitFinish {
		reason := finishReason(r)
		c.Choices = []chunkChoice{{Message: m, FinishReason: &reason}}
	} else {
		c.Choices = []chunkChoice{{Message: m}}
	}
	if r.Usage != nil {
		c.Usage = r.Usage.wire()
	}
	b := mustMarshal(c)
	if len(r.ReasoningDetails) > 0 {
		details := append([]byte(`{"reasoning_details":[`), bytes.Join(toBytes(r.ReasoningDetails), []byte(","))...)
		b = bytes.Replace(b, []byte(`{"role":"assistant"`), append(details, `],"role":"assistant"`...), 1)
	}
	return b
}

func (u *Usage) wire() *provider.ChatUsage {
	w := &provider.ChatUsage{
		PromptTokens:         u.PromptTokens,
		CompletionTokens:     u.CompletionTokens,
		TotalTokens:          u.PromptTokens + u.CompletionTokens,
		PromptCacheHitTokens: u.PromptCacheHitTokens,
		Cost:                 u.Cost,
	}
	if u.CachedTokens != nil || u.CacheWriteTokens != nil {
		w.PromptTokensDetails = &provider.ChatPromptDetails{CachedTokens: u.CachedTokens}
		if u.CacheWriteTokens != nil {
			w.PromptTokensDetails.CacheWriteTokens = *u.CacheWriteTokens
		}
	}
	return w
}

func sseData(b []byte) []byte {
	return append(append([]byte("data: "), b...), "\n\n"...)
}

// split cuts s into pieces of n runes; "" has no pieces.
func split(s string, n int) []string {
	var pieces []string
	start, count := 0, 0
	for i := range s {
		if count == n {
			pieces = append(pieces, s[start:i])
			start, count = i, 0
		}
		count++
	}
	if start < len(s) {
		pieces = append(pieces, s[start:])
	}
	return pieces
}

// mustMarshal encodes a reply's wire types, which cannot fail except for
// invalid UTF-8 in scripted strings; those are sent replaced.
func mustMarshal(v any, opts ...json.Options) []byte {
	b, err := json.Marshal(v, opts...)
	if err != nil {
		b, err = json.Marshal(v, append(opts, jsontext.AllowInvalidUTF8(true))...)
		if err != nil {
			panic(fmt.Sprintf("providertest: encode reply: %v", err))
		}
	}
	return b
}

// mustMarshalWire encodes a provider's wire type, declared for decoding
// (no omitzero tags): zero members are left out, as a server leaves out
// what does not apply.
func mustMarshalWire(v any) []byte { return mustMarshal(v, json.OmitZeroStructFields(true)) }

func toBytes(vs []jsontext.Value) [][]byte {
	out := make([][]byte, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}
