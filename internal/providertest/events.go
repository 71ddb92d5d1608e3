package providertest

import (
	"bytes"
	"cmp"
	"fmt"
	"net/http"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/provider"
)

// chunk is a reply chunk, the provider's own wire type, in the envelope
// every server sends around it and the provider does not read.
type chunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	provider.ChatChunk
}

const chunkID = "chatcmpl-providertest"

// detailsSlot stands for the reasoning_details of a chunk while it is
// encoded; spliceDetails puts them in its place as they are: the encoder
// would normalize the spacing and escapes of bytes the client must send
// back unchanged.
var detailsSlot = jsontext.Value("[]")

func spliceDetails(b []byte, details []jsontext.Value) []byte {
	if len(details) == 0 {
		return b
	}
	raw := []byte(`"reasoning_details":[`)
	for i, d := range details {
		if i > 0 {
			raw = append(raw, ',')
		}
		raw = append(raw, d...)
	}
	return bytes.Replace(b, []byte(`"reasoning_details":[]`), append(raw, ']'), 1)
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
	size := cmp.Or(r.ChunkSize, DefaultChunkSize)
	var events [][]byte
	add := func(c provider.ChatChunk, details ...jsontext.Value) {
		if c.Choices == nil {
			c.Choices = []provider.ChatChoice{}
		}
		b := mustMarshal(chunk{ID: chunkID, Object: "chat.completion.chunk", Model: model, ChatChunk: c})
		events = append(events, sseData(spliceDetails(b, details)))
	}
	delta := func(d provider.ChatDelta, details ...jsontext.Value) {
		add(provider.ChatChunk{Choices: []provider.ChatChoice{{Delta: &d}}}, details...)
	}
	for _, piece := range split(r.Reasoning, size) {
		delta(provider.ChatDelta{Reasoning: &piece})
	}
	for _, d := range r.ReasoningDetails {
		delta(provider.ChatDelta{ReasoningDetails: detailsSlot}, d)
	}
	for _, piece := range split(r.Text, size) {
		delta(provider.ChatDelta{Content: &piece})
	}
	for i, tc := range r.ToolCalls {
		delta(provider.ChatDelta{ToolCalls: []provider.ChatToolCallDelta{{
			Index: &i, ID: tc.ID, Function: provider.ChatFunctionDelta{Name: tc.Name},
		}}})
		for _, piece := range split(tc.Arguments, size) {
			delta(provider.ChatDelta{ToolCalls: []provider.ChatToolCallDelta{{
				Index: &i, Function: provider.ChatFunctionDelta{Arguments: piece},
			}}})
		}
	}
	switch {
	case r.StreamError != "":
		add(provider.ChatChunk{
			Error:   &provider.ChatError{Message: r.StreamError, Code: mustMarshal(http.StatusBadGateway)},
			Choices: []provider.ChatChoice{{Delta: &provider.ChatDelta{}, FinishReason: new("error")}},
		})
	case !r.OmitFinish:
		add(provider.ChatChunk{Choices: []provider.ChatChoice{{Delta: &provider.ChatDelta{}, FinishReason: new(finishReason(r))}}})
	}
	if r.Usage != nil {
		add(provider.ChatChunk{Usage: r.Usage.wire()})
	}
	return append(events, sseData([]byte("[DONE]")))
}

func jsonReply(r Reply, model string) []byte {
	m := &provider.ChatDelta{}
	if r.Text != "" {
		m.Content = &r.Text
	}
	for _, tc := range r.ToolCalls {
		m.ToolCalls = append(m.ToolCalls, provider.ChatToolCallDelta{ID: tc.ID, Function: provider.ChatFunctionDelta{Name: tc.Name, Arguments: tc.Arguments}})
	}
	if len(r.ReasoningDetails) > 0 {
		m.ReasoningDetails = detailsSlot
	}
	choice := provider.ChatChoice{Message: m}
	if !r.OmitFinish {
		choice.FinishReason = new(finishReason(r))
	}
	c := chunk{ID: chunkID, Object: "chat.completion", Model: model, ChatChunk: provider.ChatChunk{Choices: []provider.ChatChoice{choice}}}
	if r.Usage != nil {
		c.Usage = r.Usage.wire()
	}
	return spliceDetails(mustMarshal(c), r.ReasoningDetails)
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
