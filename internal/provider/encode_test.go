package provider

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// wholeRequest encodes req as one ChatRequest value: the reference the
// incremental encoder must match byte for byte. Messages are encoded one by
// one with messageJSON (reasoning_details are spliced in raw) and put in
// place of a placeholder.
func wholeRequest(req Request, opts ...encodeOptions) ([]byte, error) {
	var o encodeOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	w := ChatRequest{
		Model:         req.Model,
		Stream:        true,
		StreamOptions: ChatStreamOptions{IncludeUsage: true},
	}
	var msgs [][]byte
	for i, m := range req.Messages {
		b, err := messageJSON(m, marksMessage(req.Model, i, m))
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, b)
	}
	w.Tools = wireTools(req.Tools)
	switch o.reasoning {
	case ReasoningOff:
		w.Reasoning = &ChatReasoning{Effort: "none"}
	case "":
	default:
		w.Reasoning = &ChatReasoning{Effort: o.reasoning}
	}
	if o.usageAccounting {
		w.Usage = &ChatUsageOption{Include: true}
	}
	if cacheMarked(req.Model) {
		w.CacheControl = &ChatCacheControl{Type: "ephemeral"}
	}
	b, err := json.Marshal(w)
	if err != nil {
		return nil, err
	}
	return bytes.Replace(b, []byte(`"messages":[]`), []byte(`"messages":[`+string(bytes.Join(msgs, []byte(",")))+`]`), 1), nil
}

// readBody reads a whole body, checking its size and that the reader
// behaves as an io.Reader should.
func readBody(t *testing.T, b requestBody) []byte {
	t.Helper()
	got, err := io.ReadAll(b.reader())
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(got)) != b.size {
		t.Fatalf("read %d bytes, size says %d", len(got), b.size)
	}
	if err := iotest.TestReader(b.reader(), got); err != nil {
		t.Fatal(err)
	}
	return got
}

// checkEncode encodes req with e, compares the body with the reference and
// returns it.
func checkEncode(t *testing.T, e *requestEncoder, req Request) []byte {
	t.Helper()
	want, werr := wholeRequest(req, e.opts)
	body, gerr := e.encode(req)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("error = %v, reference error = %v", gerr, werr)
	}
	if gerr != nil {
		return nil
	}
	got := readBody(t, body)
	if !bytes.Equal(got, want) {
		t.Fatalf("body differs from the whole encoding\n got %s\nwant %s", got, want)
	}
	if !jsontext.Value(got).IsValid() {
		t.Fatalf("invalid JSON: %s", got)
	}
	return got
}

func str(s string) *string { return &s }

func TestEncodeGrowingContext(t *testing.T) {
	var e requestEncoder
	tools := []ToolDefinition{
		{Name: "read", Description: "Read a file.", Parameters: jsontext.Value(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
		{Name: "noop"},
	}
	msgs := []Message{{Role: RoleSystem, Content: str("You are a test.")}}
	checkEncode(t, &e, Request{Model: "m"})
	for i := range 20 {
		msgs = append(msgs,
			Message{Role: RoleUser, Content: str(fmt.Sprintf("question %d with \"quotes\", <html> & \t tabs\n", i))},
			Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: fmt.Sprint("c", i), Name: "read", Arguments: `{"path":"a.go"}`}}},
			Message{Role: RoleTool, ToolCallID: fmt.Sprint("c", i), Content: str("package main\n\nfunc main() {}\n é ✓")},
		)
		checkEncode(t, &e, Request{Model: "test/model", Messages: msgs, Tools: tools})
	}
	if len(e.prev) != len(msgs) {
		t.Fatalf("cached %d messages, want %d", len(e.prev), len(msgs))
	}
}

// TestEncodeParams checks the request members written by hand after the
// tools (reasoning effort, usage accounting, automatic caching) against
// the wire type's encoding, for every effort and both kinds of model.
func TestEncodeParams(t *testing.T) {
	for _, reasoning := range []string{ReasoningDefault, ReasoningOff, ReasoningLow, ReasoningMedium, ReasoningHigh} {
		for _, model := range []string{"openai/gpt-5", "anthropic/claude-sonnet-4"} {
			e := requestEncoder{opts: encodeOptions{reasoning: reasoning, usageAccounting: reasoning == ReasoningLow}}
			checkEncode(t, &e, Request{Model: model, Messages: []Message{{Role: RoleUser, Content: str("hi")}}})
		}
	}
}

// TestEncodeNotFooledByChangedMessages checks that an encoding is reused
// only for an equal message: a message changed in place through the same
// pointer or slice, a compaction that rewrites the prefix, an empty
// context.
func TestEncodeNotFooledByChangedMessages(t *testing.T) {
	var e requestEncoder
	content := "first answer"
	calls := []ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"ls"}`}}
	msgs := []Message{
		{Role: RoleSystem, Content: str("sys")},
		{Role: RoleUser, Content: &content},
		{Role: RoleAssistant, Content: nil, ToolCalls: calls},
		{Role: RoleTool, ToolCallID: "c1", Content: str("out")},
	}
	checkEncode(t, &e, Request{Model: "m", Messages: msgs})

	content = "changed through the same pointer"
	checkEncode(t, &e, Request{Model: "m", Messages: msgs})

	calls[0].Arguments = `{"command":"pwd"}`
	checkEncode(t, &e, Request{Model: "m", Messages: msgs})

	msgs[2].Content = str("") // null content becomes ""
	checkEncode(t, &e, Request{Model: "m", Messages: msgs})

	msgs[3].ToolCallID = "c2"
	msgs[3].Role = RoleUser
	checkEncode(t, &e, Request{Model: "m", Messages: msgs})

	compacted := []Message{msgs[0], {Role: RoleUser, Content: str("[Compacted history]\nsummary")}, msgs[3]}
	checkEncode(t, &e, Request{Model: "m", Messages: compacted})
	checkEncode(t, &e, Request{Model: "m", Messages: msgs[:1]})
	checkEncode(t, &e, Request{Model: "other", Messages: nil})
	checkEncode(t, &e, Request{Model: "m", Messages: msgs})
}

// TestEncodeEarlierBodyUnchanged checks that a body still reads what was
// encoded after later requests replaced the messages it was made of (the
// transport may still be sending it).
func TestEncodeEarlierBodyUnchanged(t *testing.T) {
	var e requestEncoder
	msgs := []Message{{Role: RoleSystem, Content: str("sys")}, {Role: RoleUser, Content: str("one")}, {Role: RoleUser, Content: str("two")}}
	first, err := e.encode(Request{Model: "m", Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := wholeRequest(Request{Model: "m", Messages: msgs})
	checkEncode(t, &e, Request{Model: "m", Messages: []Message{msgs[2], msgs[0]}})
	checkEncode(t, &e, Request{Model: "m", Messages: []Message{{Role: RoleUser, Content: str("three")}, msgs[1], msgs[0], msgs[2]}})
	if got := readBody(t, first); !bytes.Equal(got, want) {
		t.Fatalf("first body changed\n got %s\nwant %s", got, want)
	}
}

func TestEncodeInvalidUTF8(t *testing.T) {
	var e requestEncoder
	good := []Message{{Role: RoleSystem, Content: str("sys")}, {Role: RoleUser, Content: str("hi")}}
	checkEncode(t, &e, Request{Model: "m", Messages: good})
	bad := append(good[:2:2], Message{Role: RoleTool, ToolCallID: "c", Content: str("bad \xff byte")})
	checkEncode(t, &e, Request{Model: "m", Messages: bad})
	checkEncode(t, &e, Request{Model: "bad \xff", Messages: good})
	checkEncode(t, &e, Request{Model: "m", Messages: good, Tools: []ToolDefinition{{Name: "t", Parameters: jsontext.Value(`{"a":1,"a":2}`)}}})
	checkEncode(t, &e, Request{Model: "m", Messages: good})
	// A failed message leaves nothing behind that a zero message could
	// be mistaken for.
	bad[1] = Message{Role: RoleUser, Content: str("\xff")}
	checkEncode(t, &e, Request{Model: "m", Messages: bad})
	checkEncode(t, &e, Request{Model: "m", Messages: []Message{good[0], {}, {}}})
}

// TestEncodeConcurrent shares one encoder between goroutines sending
// different contexts, as two agents sharing a Client would.
func TestEncodeConcurrent(t *testing.T) {
	var e requestEncoder
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			var msgs []Message
			for range 50 {
				msgs = append(msgs, Message{Role: RoleUser, Content: str(fmt.Sprintf("g%d m%d", g, rng.IntN(1000)))})
				req := Request{Model: "m", Messages: msgs}
				want, _ := wholeRequest(req)
				body, err := e.encode(req)
				if err != nil {
					t.Error(err)
					return
				}
				if got, _ := io.ReadAll(body.reader()); !bytes.Equal(got, want) {
					t.Errorf("goroutine %d: got %s, %v", g, got, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// FuzzEncodeRequest sends a sequence of requests built from the fuzzed
// strings: a growing context, then one edited in the middle and a shorter
// one. Every body must equal the whole encoding.
func FuzzEncodeRequest(f *testing.F) {
	f.Add("hello", "call_1", `{"path":"x"}`, uint8(3))
	f.Add("", "", "", uint8(0))
	f.Add("\xff\xfe", "c", "\"\\\n", uint8(200))
	f.Add("<&>\u2028", "c\x00", "{}", uint8(17))
	f.Fuzz(func(t *testing.T, content, id, args string, shape uint8) {
		var e requestEncoder
		var msgs []Message
		for i := range int(shape%8) + 1 {
			m := Message{Role: RoleUser, Content: str(content)}
			switch (int(shape) + i) % 3 {
			case 1:
				m = Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: id, Name: "read", Arguments: args}}}
			case 2:
				m = Message{Role: RoleTool, ToolCallID: id, Content: str(args)}
			}
			msgs = append(msgs, m)
			checkEncode(t, &e, Request{Model: "m", Messages: msgs})
		}
		mid := len(msgs) / 2
		msgs[mid].Content = str(content + id)
		checkEncode(t, &e, Request{Model: "m", Messages: msgs})
		checkEncode(t, &e, Request{Model: id, Messages: msgs[mid:]})
	})
}

// BenchmarkEncodeRequest encodes a 1,000-step context (about 1.7 MB) from
// scratch and again with one more message, as each agent step does.
func BenchmarkEncodeRequest(b *testing.B) {
	var msgs []Message
	msgs = append(msgs, Message{Role: RoleSystem, Content: str("You are a coding agent.")})
	out := string(bytes.Repeat([]byte("\tif err != nil {\n\t\treturn fmt.Errorf(\"read %q: %w\", name, err)\n\t}\n"), 16))
	for i := range 1000 {
		id := fmt.Sprintf("call_%d", i)
		msgs = append(msgs,
			Message{Role: RoleAssistant, Content: str("Let me look."), ToolCalls: []ToolCall{{ID: id, Name: "read", Arguments: `{"path":"x.go"}`}}},
			Message{Role: RoleTool, ToolCallID: id, Content: &out})
	}
	req := Request{Model: "test/model", Messages: msgs}
	body, err := wholeRequest(req)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("whole", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			var e requestEncoder
			if _, err := e.encode(req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("one-more-message", func(b *testing.B) {
		var e requestEncoder
		if _, err := e.encode(req); err != nil {
			b.Fatal(err)
		}
		next := Request{Model: req.Model, Messages: append(msgs[:len(msgs):len(msgs)], Message{Role: RoleUser, Content: str("next")})}
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			e.prev = e.prev[:len(msgs)] // the new message is new every time
			if _, err := e.encode(next); err != nil {
				b.Fatal(err)
			}
		}
	})
}
