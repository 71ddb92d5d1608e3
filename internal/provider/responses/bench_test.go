package responses

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/provider"
)

// BenchmarkReadStream decodes a reply of 2,000 text deltas (about 60 KB).
func BenchmarkReadStream(b *testing.B) {
	var s strings.Builder
	s.WriteString(`data: {"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}}` + "\n\n")
	for i := range 2000 {
		fmt.Fprintf(&s, `data: {"type":"response.output_text.delta","sequence_number":%d,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"word %d "}`+"\n\n", i+1, i)
	}
	s.WriteString(`data: {"type":"response.completed","response":{"status":"completed","model":"gpt-5.1","output":[],"usage":{"input_tokens":10,"output_tokens":2000}}}` + "\n\n")
	data := []byte(s.String())
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := readStream(bytes.NewReader(data), "", nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeRequest encodes the request of a long session: 200 tool
// rounds (a call with 1 KB of arguments and a 4 KB result each), encoded
// whole on every step.
func BenchmarkEncodeRequest(b *testing.B) {
	text := "do it"
	msgs := []provider.Message{{Role: provider.RoleSystem, Content: &text}, {Role: provider.RoleUser, Content: &text}}
	args := `{"command":"` + strings.Repeat("x", 1000) + `"}`
	result := strings.Repeat("line of output\n", 270)
	for i := range 200 {
		id := fmt.Sprintf("call_%d", i)
		msgs = append(msgs, provider.Message{Role: provider.RoleAssistant, ToolCalls: []provider.ToolCall{{ID: id, Name: "bash", Arguments: args}}},
			provider.Message{Role: provider.RoleTool, ToolCallID: id, Content: &result})
	}
	req := provider.Request{Model: "gpt-5.1", Messages: msgs}
	o := (&wire{}).options("gpt-5.1")
	b.Run("whole", func(b *testing.B) {
		for b.Loop() {
			if _, err := encodeRequest(req, o, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	// A step of a running session: all but the last round were encoded
	// for the previous request.
	b.Run("step", func(b *testing.B) {
		var w wire
		prev := provider.Request{Model: req.Model, Messages: req.Messages[:len(req.Messages)-2]}
		for b.Loop() {
			b.StopTimer()
			if _, err := w.Encode(prev); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if _, err := w.Encode(req); err != nil {
				b.Fatal(err)
			}
		}
	})
}
