package acp

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// runFrame passes input through frame and returns what went to the SDK
// and what was answered.
func runFrame(t testing.TB, input []byte) (forwarded, replies []byte) {
	pr, pw := io.Pipe()
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(pr)
		got <- b
	}()
	var out bytes.Buffer
	if err := frame(bytes.NewReader(input), pw, &out, nil, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatalf("frame: %v", err)
	}
	return <-got, out.Bytes()
}

// Every line frame forwards is one JSON-RPC object, and every line it
// answers is a JSON-RPC error response; nothing else comes out.
func FuzzFrame(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}` + "\n",
		`{"jsonrpc":"2.0","id":1,"method":"initialize",` + "\n",
		"[1,2]\n\n  \n" + `{"jsonrpc":"2.0","method":"session/cancel"}`,
		`{"jsonrpc":"1.0","id":"x"}` + "\n" + `{"jsonrpc":"2.0","id":{"a":1},"method":"m"}` + "\n",
		`{"jsonrpc":"2.0","id":null}` + "\n" + `"just a string"` + "\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		fwd, replies := runFrame(t, input)
		for _, l := range splitLines(fwd) {
			// Decoded as the SDK decodes it.
			var m struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Method  string          `json:"method"`
			}
			if err := json.Unmarshal(l, &m); err != nil || m.JSONRPC != "2.0" || (m.Method == "" && m.ID == nil) {
				t.Fatalf("forwarded %q", l)
			}
		}
		for _, l := range splitLines(replies) {
			var m struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Error   *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(l, &m); err != nil || m.JSONRPC != "2.0" || m.Error == nil || m.Error.Message == "" || m.ID == nil {
				t.Fatalf("reply %q", l)
			}
		}
	})
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if len(l) > 0 {
			out = append(out, l)
		}
	}
	return out
}

// An oversized line is answered with its id, read from its start, and the
// next message goes through.
func TestFrameOversizedLine(t *testing.T) {
	input := `{"jsonrpc":"2.0","id":"big","method":"session/prompt","params":{"x":"` + strings.Repeat("a", MaxMessage) + `"}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"initialize"}` + "\n"
	fwd, replies := runFrame(t, []byte(input))
	if string(fwd) != `{"jsonrpc":"2.0","id":2,"method":"initialize"}`+"\n" {
		t.Fatalf("forwarded %.200q", fwd)
	}
	if !bytes.Contains(replies, []byte(`"id":"big"`)) || !bytes.Contains(replies, []byte(`-32600`)) {
		t.Fatalf("replies %q", replies)
	}
}

// A message without a final newline is still taken at end of input.
func TestFrameLastLineWithoutNewline(t *testing.T) {
	fwd, _ := runFrame(t, []byte(`{"jsonrpc":"2.0","id":1,"method":"m"}`))
	if string(fwd) != `{"jsonrpc":"2.0","id":1,"method":"m"}`+"\n" {
		t.Fatalf("forwarded %q", fwd)
	}
}
