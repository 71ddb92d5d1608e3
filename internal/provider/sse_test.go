package provider

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func events(t *testing.T, stream string) []string {
	t.Helper()
	s := newSSEReader(strings.NewReader(stream))
	var out []string
	for {
		d, err := s.next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(d))
	}
}

func TestSSEFraming(t *testing.T) {
	tests := []struct {
		name, stream string
		want         []string
	}{
		{"lf", "data: a\n\ndata: b\n\n", []string{"a", "b"}},
		{"crlf", "data: a\r\n\r\ndata: b\r\n\r\n", []string{"a", "b"}},
		{"lone cr", "data: a\r\rdata: b\r\r", []string{"a", "b"}},
		{"no space after colon", "data:a\n\n", []string{"a"}},
		{"only one space is stripped", "data:  a\n\n", []string{" a"}},
		{"multi-line data", "data: {\"x\":\ndata: 1}\n\n", []string{"{\"x\":\n1}"}},
		{"comments and keep-alives", ": OPENROUTER PROCESSING\n\n:\n\ndata: a\n\n", []string{"a"}},
		{"other fields ignored", "event: message\nid: 7\nretry: 10\ndata: a\n\n", []string{"a"}},
		{"blank lines between events", "\n\n\ndata: a\n\n\n\n", []string{"a"}},
		{"last event without blank line", "data: a\n\ndata: b", []string{"a", "b"}},
		{"empty data", "data:\n\n", []string{""}},
		{"no events", ": ping\n\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := events(t, tt.stream)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Errorf("events = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestSSEByteAtATime checks framing does not depend on read boundaries.
func TestSSEByteAtATime(t *testing.T) {
	stream := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hé\"}}]}\r\n\r\n" +
		": keep-alive\r\n\r\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\r\n\r\n" +
		"data: [DONE]\r\n\r\n"
	acc := newAccumulator("", nil)
	r, err := readSSE(iotest.OneByteReader(strings.NewReader(stream)), acc)
	if err != nil {
		t.Fatal(err)
	}
	if *r.Content != "hé" || r.FinishReason != FinishStop {
		t.Errorf("response = %+v", r)
	}
}

func TestReadSSEStopsAtDone(t *testing.T) {
	stream := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	// Whatever follows [DONE] is never read.
	r := io.MultiReader(strings.NewReader(stream), iotest.ErrReader(errors.New("read past [DONE]")))
	if _, err := readSSE(r, newAccumulator("", nil)); err != nil {
		t.Fatal(err)
	}
}

func TestReadSSEIgnoresOtherChoices(t *testing.T) {
	stream := "data: {\"choices\":[{\"index\":1,\"delta\":{\"content\":\"other\"}},{\"index\":0,\"delta\":{\"content\":\"mine\"},\"finish_reason\":\"stop\"}]}\n\n"
	r, err := readSSE(strings.NewReader(stream), newAccumulator("", nil))
	if err != nil || *r.Content != "mine" {
		t.Fatalf("%+v, %v", r, err)
	}
}

func TestReadSSEInvalidChunk(t *testing.T) {
	for _, stream := range []string{
		"data: {not json}\n\ndata: [DONE]\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\",\"content\":\"b\"}}]}\n\n", // duplicate name
	} {
		_, err := readSSE(strings.NewReader(stream), newAccumulator("", nil))
		var pe *Error
		if !errors.As(err, &pe) || pe.Kind != KindMalformedResponse {
			t.Errorf("%q: error = %v", stream, err)
		}
	}
}

func TestToolCallWithoutID(t *testing.T) {
	stream := "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"read\",\"arguments\":\"{}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n"
	r, err := readSSE(strings.NewReader(stream), newAccumulator("", nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.ToolCalls) != 1 || !strings.HasPrefix(r.ToolCalls[0].ID, "call_") || len(r.ToolCalls[0].ID) < 10 {
		t.Errorf("ToolCalls = %+v, want a generated id", r.ToolCalls)
	}
	nameless := strings.Replace(stream, `"name":"read",`, "", 1)
	_, err = readSSE(strings.NewReader(nameless), newAccumulator("", nil))
	var pe *Error
	if !errors.As(err, &pe) || pe.Kind != KindMalformedResponse {
		t.Errorf("nameless call: error = %v", err)
	}
}

func TestLimitedBody(t *testing.T) {
	b := &limitedBody{r: bytes.NewReader(make([]byte, 100)), n: 100}
	if got, err := io.ReadAll(b); err != nil || len(got) != 100 {
		t.Errorf("exactly at the limit: %d bytes, %v", len(got), err)
	}
	b = &limitedBody{r: bytes.NewReader(make([]byte, 101)), n: 100}
	if got, err := io.ReadAll(b); !errors.Is(err, errTooLarge) || len(got) != 100 {
		t.Errorf("one byte over: %d bytes, %v", len(got), err)
	}
}
