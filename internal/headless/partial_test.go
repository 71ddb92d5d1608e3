package headless_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// With --include-partial-messages a reply's tool calls are streamed as
// tool_use blocks (their input in an input_json_delta), a message_delta
// carries the stop reason and usage, and the stream's message id is the
// assistant message's.
func TestPartialMessagesToolCallsAndIDs(t *testing.T) {
	dir := t.TempDir()
	srv := providertest.New(t,
		providertest.Reply{Text: "Listing.", ToolCalls: []providertest.ToolCall{{ID: "call-ls", Name: "bash", Arguments: `{"command":"ls","description":"List files"}`}},
			Usage: &providertest.Usage{PromptTokens: 20, CompletionTokens: 4}},
		providertest.Reply{Text: "Done.", ChunkSize: 2},
	)
	p := start(t, srv, dir, append(strings.Fields(streamArgs), "--include-partial-messages", "--permission-mode=bypassPermissions")...)
	p.send(userLine("list the files"))
	_ = p.stdin.Close()
	var starts, assistants []string
	var tools []map[string]any
	var inputs []string
	var stops []any
	for _, m := range p.rest() {
		switch m["type"] {
		case "stream_event":
			ev := m["event"].(map[string]any)
			switch ev["type"] {
			case "message_start":
				starts = append(starts, ev["message"].(map[string]any)["id"].(string))
			case "content_block_start":
				if cb := ev["content_block"].(map[string]any); cb["type"] == "tool_use" {
					tools = append(tools, cb)
				}
			case "content_block_delta":
				if d := ev["delta"].(map[string]any); d["type"] == "input_json_delta" {
					inputs = append(inputs, d["partial_json"].(string))
				}
			case "message_delta":
				stops = append(stops, ev["delta"].(map[string]any)["stop_reason"])
			}
		case "assistant":
			assistants = append(assistants, m["message"].(map[string]any)["id"].(string))
		}
	}
	if p.exit() != 0 {
		t.Error("tiny-go failed")
	}
	if len(starts) != 2 || strings.Join(starts, ",") != strings.Join(assistants, ",") {
		t.Errorf("message_start ids %v, assistant ids %v; want the same two", starts, assistants)
	}
	if len(tools) != 1 || tools[0]["id"] != "call-ls" || tools[0]["name"] != "Bash" {
		t.Fatalf("tool_use blocks streamed: %v", tools)
	}
	var in map[string]any
	if len(inputs) != 1 || json.Unmarshal([]byte(inputs[0]), &in) != nil || in["command"] != "ls" || in["description"] != "List files" {
		t.Errorf("input_json_delta %v; want the call's whole input", inputs)
	}
	if len(stops) != 2 || stops[0] != "tool_use" || stops[1] != "end_turn" {
		t.Errorf("message_delta stop reasons %v; want tool_use, end_turn", stops)
	}
}

// A reply that fails midway with its usage beside the error (OpenRouter's
// shape) is billed: the result's usage counts its tokens.
func TestFailedReplyUsageIsBilled(t *testing.T) {
	dir := t.TempDir()
	body := "data: " + `{"choices":[{"index":0,"delta":{"content":"par"}}]}` + "\n\n" +
		"data: " + `{"error":{"message":"Upstream error","code":502},"usage":{"prompt_tokens":43,"completion_tokens":10,"total_tokens":53}}` + "\n\n"
	srv := providertest.New(t, providertest.Reply{Body: body})
	p := start(t, srv, dir, "-p", "--output-format=json", "hello")
	var r map[string]any
	for _, m := range p.rest() {
		if m["type"] == "result" {
			r = m
		}
	}
	if p.exit() != 1 || r == nil || r["is_error"] != true {
		t.Fatalf("result %v; want a failed run, exit 1", r)
	}
	if u := r["usage"].(map[string]any); u["input_tokens"] != 43.0 || u["output_tokens"] != 10.0 {
		t.Errorf("usage %v; want the 43 and 10 tokens the provider billed", u)
	}
}

// A run whose context fills is compacted inside the turn: system/status
// says "compacting", then no status with compact_result, as Claude
// Code's does, and the turn goes on to its answer.
func TestCompactionStatus(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var replies []providertest.Reply
	for i, prompt := range []int64{300, 500, 700, 900} {
		replies = append(replies, providertest.Reply{
			ToolCalls: []providertest.ToolCall{{ID: providertest.LongTaskCallID(i + 1), Name: "read", Arguments: `{"path":"a.txt"}`}},
			Usage:     &providertest.Usage{PromptTokens: prompt, CompletionTokens: 5},
		})
	}
	replies = append(replies,
		providertest.Reply{Text: "SUMMARY OF THE WORK", Usage: &providertest.Usage{PromptTokens: 400, CompletionTokens: 5}},
		providertest.Reply{Text: "all done", Usage: &providertest.Usage{PromptTokens: 350, CompletionTokens: 5}},
	)
	srv := providertest.New(t, replies...)
	p := start(t, srv, dir, "-p", "--output-format=stream-json", "--verbose", "--context-window", "1000", "do the task")
	var statuses []string
	var answer any
	for _, m := range p.rest() {
		if m["type"] == "system" && m["subtype"] == "status" {
			statuses = append(statuses, fmt.Sprintf("%v/%v", m["status"], m["compact_result"]))
		}
		if m["type"] == "result" {
			answer = m["result"]
		}
	}
	if p.exit() != 0 || answer != "all done" {
		t.Fatalf("answer %v; want all done", answer)
	}
	if strings.Join(statuses, ",") != "compacting/<nil>,<nil>/success" {
		t.Errorf("status messages %v; want compacting, then success", statuses)
	}
}
