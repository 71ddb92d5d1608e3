package provider

import (
	"bytes"
	"errors"
	"testing"
)

func FuzzReadSSE(f *testing.F) {
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hi\"}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":2,\"prompt_tokens_details\":{\"cached_tokens\":4}}}\n\n" +
		"data: [DONE]\n\n"))
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"read\",\"arguments\":\"{\\\"p\"}}]}}]}\r\n\r\n" +
		": keep-alive\r\n\r\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\":1}\"}}]},\"finish_reason\":\"tool_calls\"}]}\r\n\r\n"))
	f.Add([]byte("data: {\"error\":{\"message\":\"KEY12345 upstream\",\"code\":429}}\n\n"))
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"function\":{\"name\":\"x\"}}]},\"finish_reason\":\"weird\"}]}\n\ndata: [DONE]"))
	f.Add([]byte("data: {\"choices\":\ndata: []}\r\rdata: [DONE]\r"))
	f.Fuzz(func(t *testing.T, data []byte) {
		const key = "KEY12345"
		const limit = 1 << 12
		var streamed int
		acc := newAccumulator(key, func(d Delta) { streamed += len(d.Content) })
		r, err := readSSE(&limitedBody{r: bytes.NewReader(data), n: limit}, acc)
		if streamed > len(data) {
			t.Fatalf("streamed %d bytes from %d", streamed, len(data))
		}
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) && !errors.Is(err, errTooLarge) {
				t.Fatalf("unexpected error type %T: %v", err, err)
			}
			if pe != nil {
				checkMessage(t, pe.Message, key)
			}
			return
		}
		switch r.FinishReason {
		case FinishStop, FinishToolUse, FinishLength:
		default:
			t.Fatalf("FinishReason = %q", r.FinishReason)
		}
		if r.Content != nil && (*r.Content == "" || len(*r.Content) != streamed) {
			t.Fatalf("content %q does not match the %d streamed bytes", *r.Content, streamed)
		}
		for _, c := range r.ToolCalls {
			if c.ID == "" || c.Name == "" {
				t.Fatalf("incomplete tool call %+v", c)
			}
		}
	})
}
