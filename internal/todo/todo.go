// Package todo is the model's task list: the todo_write tool (Claude
// Code's TodoWrite shape), the list it carries, and the list a session
// holds now. The list is never stored on its own: it is the arguments of
// the session's last todo_write call, so a resume, a fork and a rewind
// restore it from the session's own facts.
package todo

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// ToolName is the tool's name as the model sees it (cctools maps it to
// Claude Code's TodoWrite).
const ToolName = "todo_write"

// Statuses of an item.
const (
	Pending    = "pending"
	InProgress = "in_progress"
	Completed  = "completed"
)

// Item is one task.
type Item struct {
	Content    string `json:"content"`
	Status     string `json:"status"`
	ActiveForm string `json:"activeForm"`
}

// List is the whole list, in the model's order.
type List []Item

// Open reports whether anything of l is still to be done.
func (l List) Open() bool {
	for _, it := range l {
		if it.Status != Completed {
			return true
		}
	}
	return false
}

// maxItems bounds one list: the list is shown on every change.
const maxItems = 100

// Parse validates the arguments of a todo_write call. Its errors are
// model-facing sentences.
func Parse(args []byte) (List, error) {
	var a struct {
		Todos *[]struct {
			Content    *string `json:"content"`
			Status     *string `json:"status"`
			ActiveForm *string `json:"activeForm"`
		} `json:"todos"`
	}
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, errors.New("todo_write arguments must be {\"todos\": [{\"content\", \"status\", \"activeForm\"}, ...]}")
	}
	if a.Todos == nil {
		return nil, errors.New("todos is required: the whole list, every call")
	}
	if len(*a.Todos) > maxItems {
		return nil, fmt.Errorf("todos has %d items; at most %d", len(*a.Todos), maxItems)
	}
	out := make(List, 0, len(*a.Todos))
	for i, t := range *a.Todos {
		it := Item{}
		switch {
		case t.Content == nil || strings.TrimSpace(*t.Content) == "":
			return nil, fmt.Errorf("todos[%d].content must be a non-empty string", i)
		case t.Status == nil:
			return nil, fmt.Errorf("todos[%d].status is required (pending, in_progress or completed)", i)
		}
		it.Content, it.Status = *t.Content, *t.Status
		if it.Status != Pending && it.Status != InProgress && it.Status != Completed {
			return nil, fmt.Errorf("todos[%d].status must be pending, in_progress or completed, not %q", i, it.Status)
		}
		if t.ActiveForm != nil {
			it.ActiveForm = *t.ActiveForm
		}
		if strings.TrimSpace(it.ActiveForm) == "" {
			it.ActiveForm = it.Content
		}
		out = append(out, it)
	}
	return out, nil
}

// FromState is the list a session holds: the arguments of the last
// todo_write call that got a successful result, in the transcript the
// reduced state keeps (a rewound or compacted-away list is gone with the
// turns that wrote it). Nil when there is none.
func FromState(st *session.State) List {
	if st == nil {
		return nil
	}
	ok := map[string]bool{} // tool_call_id -> answered with success
	msgs := st.Transcript
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		switch m.Role {
		case session.RoleTool:
			ok[m.ToolCallID] = m.Content != nil && *m.Content == resultText
		case session.RoleAssistant:
			for j := len(m.ToolCalls) - 1; j >= 0; j-- {
				c := m.ToolCalls[j]
				if c.Function.Name != ToolName || !ok[c.ID] {
					continue
				}
				if l, err := Parse([]byte(c.Function.Arguments)); err == nil {
					return l
				}
			}
		}
	}
	return nil
}

// resultText is the result of a successful call: it tells the model the
// list took, and to keep it current.
const resultText = "Todo list updated. Keep it current: mark each task in_progress when you start it and completed as soon as it is done."

// Tool is todo_write. It changes nothing outside the session: the list is
// its arguments, and whoever shows it (the terminal, an editor) reads them
// from the call.
type Tool struct{}

// Definition implements tools.Tool.
func (Tool) Definition() tools.Definition {
	return tools.Definition{
		Name: ToolName,
		Description: "Keep a short task list for the current work, shown to the user. Send the whole list every call. " +
			"Use it for tasks of three or more steps: add the steps, mark one in_progress before you start it, " +
			"and mark it completed as soon as it is done. Skip it for trivial one-step requests.",
		Parameters: jsontext.Value(`{"type":"object","properties":{"todos":{"type":"array","description":"The whole list, in order.","items":{"type":"object","properties":{` +
			`"content":{"type":"string","description":"The task, imperative: \"Run the tests\"."},` +
			`"status":{"type":"string","enum":["pending","in_progress","completed"]},` +
			`"activeForm":{"type":"string","description":"The task while it is done: \"Running the tests\"."}` +
			`},"required":["content","status","activeForm"]}}},"required":["todos"]}`),
	}
}

// Replay implements tools.Tool: todo_write is no read, so it is never
// replayed (runtime.md §2); an interrupted call is simply written again by
// the model.
func (Tool) Replay() tools.Replay {
	return tools.Replay{Policy: tools.ReplayNever, Key: "tiny-go:todo_write:v1"}
}

// Run implements tools.Tool.
func (Tool) Run(_ context.Context, args jsontext.Value) tools.Result {
	if _, err := Parse(args); err != nil {
		return tools.Result{Content: "Error: " + err.Error(), IsError: true}
	}
	return tools.Result{Content: resultText}
}

// Lines renders l for a terminal, one line per item: [x] done,
// [>] the one in progress (its active form), [ ] still to do.
func Lines(l List) []string {
	out := make([]string, 0, len(l))
	for _, it := range l {
		switch it.Status {
		case Completed:
			out = append(out, "[x] "+oneLine(it.Content))
		case InProgress:
			out = append(out, "[>] "+oneLine(it.ActiveForm))
		default:
			out = append(out, "[ ] "+oneLine(it.Content))
		}
	}
	return out
}

func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}
