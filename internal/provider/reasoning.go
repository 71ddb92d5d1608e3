package provider

import (
	"bytes"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Reasoning efforts of Config.Reasoning (and of the --reasoning flag).
const (
	ReasoningDefault = "" // send nothing: the model's own default
	ReasoningOff     = "off"
	ReasoningLow     = "low"
	ReasoningMedium  = "medium"
	ReasoningHigh    = "high"
)

// ValidReasoning reports whether effort is one of the Reasoning constants.
func ValidReasoning(effort string) bool {
	switch effort {
	case ReasoningDefault, ReasoningOff, ReasoningLow, ReasoningMedium, ReasoningHigh:
		return true
	}
	return false
}

// detailMerger rebuilds the reasoning_details array of a streamed reply.
//
// A stream carries each detail in fragments: objects with the same
// "index" whose text (or summary, data, signature) continues the previous
// fragment's. The array sent back must hold one object per detail, in
// order, exactly as the provider meant it, so fragments are joined by
// index: string members that continue are concatenated, other members
// keep their first value, members first seen later are appended. A detail
// that arrived in one fragment is kept byte for byte as received; so is
// the whole array of a non-streamed reply (see accumulator).
type detailMerger struct {
	items   []*detailItem
	byIndex map[string]*detailItem
}

type detailItem struct {
	raw     jsontext.Value // the only fragment, as received
	members []detailMember // set once a second fragment merged
}

type detailMember struct {
	name  string
	value jsontext.Value
}

// continued are the members whose string values continue across
// fragments.
var continued = map[string]bool{"text": true, "summary": true, "data": true, "signature": true}

// add merges one streamed fragment. Values that are not JSON are dropped.
func (m *detailMerger) add(frag jsontext.Value) {
	if !frag.IsValid() {
		return
	}
	frag = bytes.Clone(frag)
	members, ok := objectMembers(frag)
	if !ok {
		m.items = append(m.items, &detailItem{raw: frag})
		return
	}
	var index string
	for _, mb := range members {
		if mb.name == "index" {
			index = string(mb.value)
		}
	}
	if index == "" {
		m.items = append(m.items, &detailItem{raw: frag})
		return
	}
	if m.byIndex == nil {
		m.byIndex = make(map[string]*detailItem)
	}
	it, seen := m.byIndex[index]
	if !seen {
		it = &detailItem{raw: frag}
		m.byIndex[index] = it
		m.items = append(m.items, it)
		return
	}
	if it.members == nil {
		it.members, _ = objectMembers(it.raw)
	}
	for _, mb := range members {
		it.merge(mb)
	}
}

func (it *detailItem) merge(mb detailMember) {
	for i := range it.members {
		old := &it.members[i]
		if old.name != mb.name {
			continue
		}
		switch {
		case continued[mb.name] && old.value.Kind() == '"' && mb.value.Kind() == '"':
			var a, b string
			if json.Unmarshal(old.value, &a) == nil && json.Unmarshal(mb.value, &b) == nil && b != "" {
				if v, err := json.Marshal(a + b); err == nil {
					old.value = v
				}
			}
		case old.value.Kind() == 'n' && mb.value.Kind() != 'n':
			old.value = mb.value
		}
		return
	}
	it.members = append(it.members, mb)
}

// result is the merged array, or nil when nothing arrived.
func (m *detailMerger) result() jsontext.Value {
	if len(m.items) == 0 {
		return nil
	}
	b := []byte{'['}
	for i, it := range m.items {
		if i > 0 {
			b = append(b, ',')
		}
		if it.members == nil {
			b = append(b, it.raw...)
			continue
		}
		b = append(b, '{')
		for j, mb := range it.members {
			if j > 0 {
				b = append(b, ',')
			}
			name, _ := jsontext.AppendQuote(nil, mb.name)
			b = append(append(append(b, name...), ':'), mb.value...)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// objectMembers splits a JSON object into its members, values raw. It
// reports false for anything but a valid object.
func objectMembers(v jsontext.Value) ([]detailMember, bool) {
	dec := jsontext.NewDecoder(bytes.NewReader(v))
	tok, err := dec.ReadToken()
	if err != nil || tok.Kind() != '{' {
		return nil, false
	}
	var out []detailMember
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, false
		}
		name := tok.String() // before the next read voids the token
		val, err := dec.ReadValue()
		if err != nil {
			return nil, false
		}
		out = append(out, detailMember{name: name, value: bytes.Clone(val)})
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, false
	}
	return out, true
}

// splitArray returns the elements of a JSON array, raw; nil for anything
// else.
func splitArray(v jsontext.Value) []jsontext.Value {
	dec := jsontext.NewDecoder(bytes.NewReader(v))
	tok, err := dec.ReadToken()
	if err != nil || tok.Kind() != '[' {
		return nil
	}
	var out []jsontext.Value
	for dec.PeekKind() != ']' {
		val, err := dec.ReadValue()
		if err != nil {
			return nil
		}
		out = append(out, bytes.Clone(val))
	}
	return out
}

// addReasoning applies the reasoning of one streamed delta: its text is
// shown, its details are kept.
func (a *accumulator) addReasoning(d *ChatDelta) {
	text := d.Reasoning
	if text == nil || *text == "" {
		text = d.ReasoningContent
	}
	if text != nil && *text != "" && a.onDelta != nil {
		a.onDelta(Delta{Reasoning: *text})
	}
	for _, frag := range splitArray(d.ReasoningDetails) {
		a.details.add(frag)
	}
}

// IsOpenRouter reports whether endpoint is OpenRouter's API, whose
// extensions (usage accounting) other OpenAI-compatible servers reject.
func IsOpenRouter(endpoint string) bool {
	u, err := chatURL(endpoint)
	if err != nil {
		return false
	}
	h := u.Hostname()
	return h == "openrouter.ai" || strings.HasSuffix(h, ".openrouter.ai")
}
