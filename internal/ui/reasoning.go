package ui

import (
	"fmt"
	"strings"
)

// Reasoning (thinking) text streams dimmed above the status line while it
// arrives; once the answer starts or the request ends it collapses to one
// dimmed line in the transcript. It is never part of the answer.

// reasoningMsg is streamed reasoning text.
type reasoningMsg struct{ text string }

// reasoningRoom is how many lines of live reasoning are shown.
const reasoningRoom = 3

// thinking is the reasoning of the model request in progress.
type thinking struct {
	text strings.Builder
}

func (t *thinking) add(s string) { t.text.WriteString(sanitize(s)) }

// view is the dimmed tail of the live reasoning.
func (t *thinking) view(width int) []string {
	if t.text.Len() == 0 {
		return nil
	}
	lines := streamTail(t.text.String(), width, reasoningRoom)
	for i, l := range lines {
		lines[i] = faint.Render(l)
	}
	return lines
}

// collapse ends the live reasoning, returning its one-line summary ("" if
// there was none).
func (t *thinking) collapse(width int) string {
	text := strings.Join(strings.Fields(t.text.String()), " ")
	t.text.Reset()
	if text == "" {
		return ""
	}
	words := len(strings.Fields(text))
	return faint.Render(truncate(fmt.Sprintf("✻ Thought (%d words): %s", words, text), width))
}

// reasoningUpdate applies a reasoning delta, or collapses the reasoning
// when the answer (or the end of the request) arrives.
func (m *model) reasoningUpdate(msg any) {
	switch msg := msg.(type) {
	case reasoningMsg:
		m.thinking.add(msg.text)
	case deltaMsg, modelDoneMsg:
		if line := m.thinking.collapse(m.width); line != "" {
			m.print(line)
		}
	}
}
