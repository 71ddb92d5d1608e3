package anthropic

import (
	"bytes"
	"errors"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/provider"
)

// FuzzReadStream feeds arbitrary bytes to the Messages API event decoder:
// it never panics, fails only with a *provider.Error, and a settled reply
// is well formed (a known finish reason, named calls with ids, valid
// details).
func FuzzReadStream(f *testing.F) {
	f.Add([]byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude-sonnet-4\",\"usage\":{\"input_tokens\":3}}}\n\n" +
		"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\"}}\n\n" +
		"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hm\"}}\n\n" +
		"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"s\"}}\n\n" +
		"data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"read\",\"input\":{}}}\n\n" +
		"data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}\n\n" +
		"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":5}}\n\n" +
		"data: {\"type\":\"message_stop\"}\n\n"))
	f.Add([]byte("data: {\"type\":\"message_start\",\"message\":{}}\n\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"))
	f.Add([]byte("data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"redacted_thinking\",\"data\":\"x\"}}\n\ndata: {\"type\":\"message_stop\"}\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var deltas int
		r, err := readStream(bytes.NewReader(data), "KEY", func(provider.Delta) { deltas++ })
		if err != nil {
			var pe *provider.Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T) is not a *provider.Error", err, err)
			}
			if bytes.ContainsAny([]byte(pe.Message), "\r\n") {
				t.Fatalf("multi-line message %q", pe.Message)
			}
			return
		}
		switch r.FinishReason {
		case provider.FinishStop, provider.FinishToolUse, provider.FinishLength:
		default:
			t.Fatalf("finish reason %q", r.FinishReason)
		}
		for _, c := range r.ToolCalls {
			if c.ID == "" || c.Name == "" {
				t.Fatalf("call %+v", c)
			}
		}
		if r.ReasoningDetails != nil && (!jsontext.Value(r.ReasoningDetails).IsValid() || r.ReasoningDetails.Kind() != '[') {
			t.Fatalf("details %s", r.ReasoningDetails)
		}
	})
}
