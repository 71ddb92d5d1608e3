package hooks_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// The scripted model of the side-by-side runs. It answers from the
// request alone (both agents send requests of their own: titles, quota
// checks, a subagent's), so one script serves both: the step is the
// number of assistant messages the main conversation already has, and the
// tool names and inputs are each agent's own.

// scenarioPrompt is the prompt of the main run; the scripted model reads
// the working directory from it.
func scenarioPrompt(dir string) string { return "Work in " + dir + ". Go through the steps." }

// step is one tool call of the scenario, in Claude Code's terms and in
// tiny-go's.
type step struct {
	cc, tiny     string
	ccIn, tinyIn map[string]any
	text         string // a final answer instead of a call
}

func steps(dir string) []step {
	a := filepath.Join(dir, "a.txt")
	bash := func(cmd string) step {
		in := map[string]any{"command": cmd, "description": "Run " + cmd}
		return step{cc: "Bash", tiny: "bash", ccIn: in, tinyIn: in}
	}
	return []step{
		bash("echo hi"),
		{cc: "Write", tiny: "write", ccIn: map[string]any{"file_path": a, "content": "hello\nworld\n"},
			tinyIn: map[string]any{"path": a, "content": "hello\nworld\n"}},
		{cc: "Edit", tiny: "edit", ccIn: map[string]any{"file_path": a, "old_string": "hello", "new_string": "bye"},
			tinyIn: map[string]any{"path": a, "edits": []any{map[string]any{"oldText": "hello", "newText": "bye"}}}},
		{cc: "Read", tiny: "read", ccIn: map[string]any{"file_path": a}, tinyIn: map[string]any{"path": a}},
		bash("echo BLOCKME"),
		bash("echo DENYME"),
		bash("echo CTXME"),
		bash("echo FEEDME"),
		bash("echo REWRITEME"),
		bash("false"),
		{cc: "Agent", tiny: "task",
			ccIn:   map[string]any{"description": "Sub task", "prompt": "SUBTASK: answer sub done", "subagent_type": "general-purpose", "run_in_background": false},
			tinyIn: map[string]any{"description": "Sub task", "prompt": "SUBTASK: answer sub done", "subagent_type": "general-purpose", "run_in_background": false}},
		{text: "all done"},
		{text: "really done"},
	}
}

// request is the part of an Anthropic Messages request the script reads.
type request struct {
	System   json.RawMessage `json:"system"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

// text is every text of a message's content (a string or blocks,
// tool_result blocks included).
func text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []map[string]any
	_ = json.Unmarshal(raw, &blocks)
	var b strings.Builder
	for _, bl := range blocks {
		if t, ok := bl["text"].(string); ok {
			b.WriteString(t + "\n")
		}
		switch c := bl["content"].(type) {
		case string:
			b.WriteString(c + "\n")
		case []any:
			raw, _ := json.Marshal(c)
			b.WriteString(text(raw))
		}
	}
	return b.String()
}

func respond(r providertest.Request) providertest.Reply {
	var req request
	if json.Unmarshal(r.Body, &req) != nil || len(req.Messages) == 0 {
		return providertest.Reply{Text: "ok"}
	}
	first := text(req.Messages[0].Content)
	last := text(req.Messages[len(req.Messages)-1].Content)
	switch {
	case strings.Contains(last, "detailed summary") || len(req.Tools) == 0:
		// A compaction (tiny-go's summary request has no tools), a title.
		return providertest.Reply{Text: "<summary>The steps ran; a.txt says bye.</summary>"}
	case strings.Contains(first, "SUBTASK"):
		return providertest.Reply{Text: "sub done"}
	}
	dir, ok := workDir(req)
	if !ok {
		return providertest.Reply{Text: "ok"}
	}
	cc := false
	for _, t := range req.Tools {
		cc = cc || t.Name == "Bash"
	}
	n := 0
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			n += answers(m.Content)
		}
	}
	all := steps(dir)
	if n >= len(all) {
		return providertest.Reply{Text: "nothing more"}
	}
	s := all[n]
	if s.text != "" {
		return providertest.Reply{Text: s.text}
	}
	name, in := s.tiny, s.tinyIn
	if cc {
		name, in = s.cc, s.ccIn
	}
	args, _ := json.Marshal(in)
	return providertest.Reply{ToolCalls: []providertest.ToolCall{{ID: fmt.Sprintf("toolu_%02d", n), Name: name, Arguments: string(args)}}}
}

// answers counts the scripted replies in an assistant message: Claude
// Code merges consecutive assistant messages into one, each reply one
// tool_use or text block.
func answers(raw json.RawMessage) int {
	var blocks []map[string]any
	if json.Unmarshal(raw, &blocks) != nil {
		return 1
	}
	n := 0
	for _, b := range blocks {
		if b["type"] == "tool_use" || b["type"] == "text" {
			n++
		}
	}
	return max(n, 1)
}

// workDir finds the scenario's prompt in the conversation.
func workDir(req request) (string, bool) {
	for _, m := range req.Messages {
		if m.Role != "user" {
			continue
		}
		t := text(m.Content)
		if i := strings.Index(t, "Work in "); i >= 0 {
			rest := t[i+len("Work in "):]
			if j := strings.Index(rest, ". Go through"); j > 0 {
				return rest[:j], true
			}
		}
	}
	return "", false
}
