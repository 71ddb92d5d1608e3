package ui

import (
	"fmt"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/todo"
)

// The model's todo list (todo_write) is shown three ways: each change in
// the tool log (one-shot stderr, line mode, the scrollback), and in the
// terminal's live area, updated in place, while an operation runs.

// todoReport is the tool log's report of a successful todo_write call: the
// list it set.
func todoReport(t agent.ToolInfo, o agent.ToolOutcome) (toolReport, bool) {
	if t.Tool != todo.ToolName || o.Outcome != "succeeded" {
		return toolReport{}, false
	}
	l, err := todo.Parse([]byte(t.Arguments))
	if err != nil {
		return toolReport{}, false
	}
	done := 0
	for _, it := range l {
		if it.Status == todo.Completed {
			done++
		}
	}
	return toolReport{summary: fmt.Sprintf("todo list: %d of %d done", done, len(l)), preview: todo.Lines(l)}, true
}

// todoUpdate takes the list a successful todo_write call set.
func (m *model) todoUpdate(t agent.ToolInfo, o agent.ToolOutcome) {
	if t.Tool != todo.ToolName || o.Outcome != "succeeded" {
		return
	}
	if l, err := todo.Parse([]byte(t.Arguments)); err == nil {
		m.todos = l
	}
}

// todoView is the list in the live area: while an operation runs, when
// something of it is still open.
func (m *model) todoView() []string {
	if m.op == opNone || !m.todos.Open() {
		return nil
	}
	lines := todo.Lines(m.todos)
	out := make([]string, 0, len(lines))
	for i, l := range lines {
		l = truncate(l, m.width)
		switch m.todos[i].Status {
		case todo.InProgress:
			l = bold.Render(l)
		case todo.Completed:
			l = faint.Render(l)
		}
		out = append(out, l)
	}
	return out
}

// todoLines is a restored list shown after the recap of a resumed
// session, when something of it is still open.
func todoLines(l todo.List) []string {
	if !l.Open() {
		return nil
	}
	return append([]string{"Todo list:"}, todo.Lines(l)...)
}
