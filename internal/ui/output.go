package ui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// print queues text for the scrollback above the live area, wrapped to
// the terminal's width (the terminal would cut words apart).
func (m *model) print(text string) {
	m.outbox = append(m.outbox, ansi.Wrap(text, m.width, ""))
}

// flush hands the queued output to the terminal, one batch at a time so
// it keeps its order, and quits once everything is out and nothing runs.
func (m *model) flush() tea.Cmd {
	if m.printing {
		return nil
	}
	if len(m.outbox) > 0 {
		text := strings.Join(m.outbox, "\n")
		m.outbox, m.printing = nil, true
		return m.printCmd(text)
	}
	if m.quitting && m.op == opNone && !m.quit {
		m.quit = true
		return tea.Quit
	}
	return nil
}

func addUsage(a, b session.Usage) session.Usage {
	return session.Usage{Input: a.Input + b.Input, Output: a.Output + b.Output, CacheRead: a.CacheRead + b.CacheRead, CacheWrite: a.CacheWrite + b.CacheWrite}
}
