package responses

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/provider"
)

// options are what a request carries besides the conversation.
type options struct {
	effort         string
	maxOutput      int
	reasoningModel bool
	native         bool
	localShell     bool
	webSearch      bool
}

// encodeRequest writes the request body. The system messages become the
// instructions; the conversation becomes input items, raw items spliced in
// as received (an encoder would normalize them, and encrypted reasoning is
// checked byte for byte).
func encodeRequest(req provider.Request, o options, cache *itemCache) ([]byte, error) {
	var system []string
	for _, m := range req.Messages {
		if m.Role == provider.RoleSystem && m.Content != nil {
			system = append(system, *m.Content)
		}
	}
	items, err := inputItems(req.Messages, cache)
	if err != nil {
		return nil, err
	}
	r := Request{
		Model:           req.Model,
		Instructions:    strings.Join(system, "\n\n"),
		Tools:           tools(req.Tools, o),
		Store:           false,
		Stream:          true,
		Include:         []string{"reasoning.encrypted_content"},
		PromptCacheKey:  cacheKey(req.Model, system, items),
		MaxOutputTokens: o.maxOutput,
	}
	if len(r.Tools) > 0 {
		r.ToolChoice = "auto"
	}
	r.Reasoning = reasoning(o, req.Model)
	head, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	size := len(head) + 16
	for _, it := range items {
		size += len(it) + 1
	}
	body := make([]byte, 0, size) // one allocation for a body of any length
	body = append(append(body, head[:len(head)-1]...), `,"input":[`...)
	for i, it := range items {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, it...)
	}
	return append(body, "]}"...), nil
}

// reasoning is the reasoning parameter: the effort when one is set, and
// summaries for models that reason (others reject the parameter).
func reasoning(o options, model string) *Reasoning {
	if !o.reasoningModel {
		return nil
	}
	r := &Reasoning{Summary: "auto"}
	switch o.effort {
	case provider.ReasoningOff:
		r.Effort = leastEffort(model)
	case provider.ReasoningLow, provider.ReasoningMedium, provider.ReasoningHigh:
		r.Effort = o.effort
	}
	return r
}

// leastEffort is the lowest effort a model takes: "none" from GPT-5.1 on,
// "minimal" for the GPT-5 family, "low" for the o-series.
func leastEffort(model string) string {
	m := bareModel(model)
	switch {
	case strings.HasPrefix(m, "gpt-5."):
		return "none"
	case strings.HasPrefix(m, "gpt-5"):
		return "minimal"
	}
	return "low"
}

// tools are the function tools, with write, edit and bash replaced by the
// native apply_patch and shell tools when those are on (their calls come
// back as write, edit and bash; see nativeCall).
func tools(defs []provider.ToolDefinition, o options) []Tool {
	has := func(name string) bool {
		return slices.ContainsFunc(defs, func(d provider.ToolDefinition) bool { return d.Name == name })
	}
	patch := o.native && has(toolWrite) && has(toolEdit)
	shell := o.native && has(toolBash)
	var out []Tool
	strict := false
	for _, d := range defs {
		if patch && (d.Name == toolWrite || d.Name == toolEdit) || shell && d.Name == toolBash {
			continue
		}
		params := d.Parameters
		if len(params) == 0 {
			params = jsontext.Value(`{"type":"object","properties":{}}`)
		}
		out = append(out, Tool{Type: "function", Name: d.Name, Description: d.Description, Parameters: params, Strict: &strict})
	}
	if patch {
		out = append(out, Tool{Type: "apply_patch"})
	}
	switch {
	case shell && o.localShell:
		out = append(out, Tool{Type: "local_shell"})
	case shell:
		out = append(out, Tool{Type: "shell"})
	}
	if o.webSearch {
		out = append(out, Tool{Type: "web_search"})
	}
	return out
}

// cacheKey is the prompt_cache_key: the same for every request of one
// conversation (its model, instructions and first item), so the provider
// routes them to the same cache.
func cacheKey(model string, system []string, items []jsontext.Value) string {
	h := sha256.New()
	h.Write([]byte(model))
	for _, s := range system {
		h.Write([]byte{0})
		h.Write([]byte(s))
	}
	if len(items) > 0 {
		h.Write([]byte{0})
		h.Write(items[0])
	}
	return "tiny-" + hex.EncodeToString(h.Sum(nil)[:12])
}

// inputItems converts the conversation. An assistant message with kept
// items (its ReasoningDetails) is sent in the order the model produced
// them: reasoning and native calls raw, its text and function calls from
// the session. Results of native calls go back as their output items.
// cache (nil: none) reuses the items of messages the last request had.
func inputItems(msgs []provider.Message, cache *itemCache) ([]jsontext.Value, error) {
	if cache != nil {
		cache.mu.Lock()
		defer cache.mu.Unlock()
	}
	var out []jsontext.Value
	native := map[string]string{} // call_id -> native item type
	n := 0
	for _, m := range msgs {
		if m.Role == provider.RoleSystem {
			continue // the instructions
		}
		items, err := cache.items(n, m, native, func(own map[string]string) ([]jsontext.Value, error) {
			return messageItems(m, native, own)
		})
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
		n++
	}
	cache.trim(n)
	return out, nil
}

// messageItems converts one message; native holds the native calls of
// the messages before it, own receives those of this one.
func messageItems(m provider.Message, native, own map[string]string) ([]jsontext.Value, error) {
	one := func(v any) ([]jsontext.Value, error) {
		b, err := json.Marshal(v)
		return []jsontext.Value{b}, err
	}
	switch m.Role {
	case provider.RoleUser:
		return one(userMessage(m))
	case provider.RoleAssistant:
		return assistantItems(m, own)
	case provider.RoleTool:
		content := ""
		if m.Content != nil {
			content = *m.Content
		}
		if typ, ok := native[m.ToolCallID]; ok {
			return one(nativeOutput(typ, m.ToolCallID, content))
		}
		return one(FunctionCallOutput{Type: "function_call_output", CallID: m.ToolCallID, Output: content})
	}
	return nil, nil
}

func userMessage(m provider.Message) InputMessage {
	im := InputMessage{Type: "message", Role: "user"}
	if m.Content != nil {
		im.Content = append(im.Content, Part{Type: "input_text", Text: *m.Content})
	}
	for _, img := range m.Images {
		im.Content = append(im.Content, Part{Type: "input_image", ImageURL: "data:" + img.MediaType + ";base64," + base64.StdEncoding.EncodeToString(img.Data)})
	}
	if len(im.Content) == 0 {
		im.Content = []Part{{Type: "input_text", Text: ""}}
	}
	return im
}

// assistantItems converts one assistant message; native records the call
// ids of its native calls.
func assistantItems(m provider.Message, native map[string]string) ([]jsontext.Value, error) {
	var out []jsontext.Value
	textSent := false
	sent := map[string]bool{}
	text := func() error {
		textSent = true
		if m.Content == nil || *m.Content == "" {
			return nil
		}
		b, err := json.Marshal(InputMessage{Type: "message", Role: "assistant", Content: []Part{{Type: "output_text", Text: *m.Content}}})
		out = append(out, b)
		return err
	}
	call := func(c provider.ToolCall) error {
		sent[c.ID] = true
		b, err := json.Marshal(FunctionCall{Type: "function_call", CallID: c.ID, Name: c.Name, Arguments: c.Arguments})
		out = append(out, b)
		return err
	}
	for _, raw := range keptItems(m.ReasoningDetails) {
		var it Item
		if json.Unmarshal(raw, &it) != nil {
			continue
		}
		var err error
		switch {
		case it.Type == "reasoning":
			out = append(out, raw)
		case it.Type == "message" && len(it.Content) > 0:
			// A message kept whole (its citations): as it came, and
			// instead of the session's text.
			out = append(out, raw)
			textSent = true
		case it.Type == "message" && !textSent:
			err = text()
		case it.Type == webSearchCall:
			out = append(out, raw)
		case it.Type == "function_call":
			if i := slices.IndexFunc(m.ToolCalls, func(c provider.ToolCall) bool { return c.ID == it.CallID }); i >= 0 && !sent[it.CallID] {
				err = call(m.ToolCalls[i])
			}
		case isNative(it.Type) && slices.ContainsFunc(m.ToolCalls, func(c provider.ToolCall) bool { return c.ID == it.CallID }):
			out = append(out, raw)
			sent[it.CallID] = true
			native[it.CallID] = it.Type
		}
		if err != nil {
			return nil, err
		}
	}
	if !textSent {
		if err := text(); err != nil {
			return nil, err
		}
	}
	for _, c := range m.ToolCalls {
		if !sent[c.ID] {
			if err := call(c); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// keptItems are the elements of a ReasoningDetails array this adapter
// wrote, raw; nil for anything else.
func keptItems(details jsontext.Value) []jsontext.Value {
	if len(details) == 0 || details.Kind() != '[' {
		return nil
	}
	dec := jsontext.NewDecoder(bytes.NewReader(details))
	if _, err := dec.ReadToken(); err != nil {
		return nil
	}
	var out []jsontext.Value
	for dec.PeekKind() != ']' {
		v, err := dec.ReadValue()
		if err != nil {
			return nil
		}
		out = append(out, bytes.Clone(v))
	}
	return out
}
