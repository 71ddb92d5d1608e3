package responses

import (
	"bytes"
	"maps"
	"slices"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/provider"
)

// itemCache keeps the input items of every message of the last request,
// by position, so a step encodes only the messages added since the last
// one (the conversation only grows between compactions, and encoding the
// whole of a long one again on every step dominated its cost). Messages
// are compared by value: a changed, removed or moved message is encoded
// afresh. A tool result is also keyed by the type of its call, which an
// earlier message decides.
type itemCache struct {
	mu   sync.Mutex
	prev []cachedMessage
}

type cachedMessage struct {
	m          provider.Message
	content    string // *m.Content when set, copied: the caller may change it
	nativeType string
	// natives are the native calls an assistant message holds.
	natives map[string]string
	items   []jsontext.Value
}

func (c *cachedMessage) is(m provider.Message, nativeType string) bool {
	return c.m.Role == m.Role && c.m.ToolCallID == m.ToolCallID && c.nativeType == nativeType &&
		(c.m.Content == nil) == (m.Content == nil) && (m.Content == nil || c.content == *m.Content) &&
		slices.Equal(c.m.ToolCalls, m.ToolCalls) && bytes.Equal(c.m.ReasoningDetails, m.ReasoningDetails) &&
		slices.EqualFunc(c.m.Images, m.Images, func(a, b provider.Image) bool { return a.MediaType == b.MediaType && bytes.Equal(a.Data, b.Data) })
}

// items returns the input items of message i, encoding them with encode
// unless the last request had the same message there. native is updated
// with the native calls of an assistant message either way.
func (c *itemCache) items(i int, m provider.Message, native map[string]string, encode func(map[string]string) ([]jsontext.Value, error)) ([]jsontext.Value, error) {
	nativeType := ""
	if m.Role == provider.RoleTool {
		nativeType = native[m.ToolCallID]
	}
	if c != nil && i < len(c.prev) && c.prev[i].is(m, nativeType) {
		maps.Copy(native, c.prev[i].natives)
		return c.prev[i].items, nil
	}
	own := map[string]string{}
	items, err := encode(own)
	if err != nil {
		return nil, err
	}
	maps.Copy(native, own)
	if c == nil {
		return items, nil
	}
	e := cachedMessage{m: m, nativeType: nativeType, natives: own, items: items}
	e.m.ToolCalls = slices.Clone(m.ToolCalls)
	e.m.ReasoningDetails = bytes.Clone(m.ReasoningDetails)
	e.m.Images = slices.Clone(m.Images)
	if m.Content != nil {
		e.content = *m.Content
	}
	if i < len(c.prev) {
		c.prev[i] = e
	} else {
		c.prev = append(c.prev, e)
	}
	return items, nil
}

// trim lets go of the messages past n (a compaction dropped them).
func (c *itemCache) trim(n int) {
	if c != nil && n < len(c.prev) {
		clear(c.prev[n:])
		c.prev = c.prev[:n]
	}
}
