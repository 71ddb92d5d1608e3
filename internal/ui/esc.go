package ui

import (
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
)

// Esc with nothing running, as in Claude Code: a second Esc within
// escWindow on an empty prompt lists the earlier turns to rewind to (what
// /rewind shows); an Esc while that list or a planned rewind waits
// cancels it.

// escWindow is how long a second Esc rewinds.
const escWindow = 2 * time.Second

// escExpiredMsg ends the window an Esc at time at opened.
type escExpiredMsg struct{ at time.Time }

// idleEsc is Esc with no operation running.
func (m *model) idleEsc() tea.Cmd {
	if m.rewind != nil && !m.rewind.busy {
		m.rewind = nil
		m.forgetEsc()
		m.print(faint.Render("Rewind cancelled; nothing changed."))
		return nil
	}
	if strings.TrimSpace(m.input.Value()) != "" || m.rewinder == nil {
		return nil
	}
	now := m.now()
	if !m.escAt.IsZero() && now.Sub(m.escAt) < escWindow {
		m.forgetEsc()
		return m.rewindCommand("")
	}
	m.escAt = now
	m.notice = keyHint("Esc Esc")
	return tea.Tick(escWindow, func(time.Time) tea.Msg { return escExpiredMsg{at: now} })
}

// forgetEsc closes the window of a first Esc.
func (m *model) forgetEsc() {
	if m.escAt.IsZero() {
		return
	}
	m.escAt = time.Time{}
	if m.notice == keyHint("Esc Esc") {
		m.notice = ""
	}
}

func (m *model) escExpired(msg escExpiredMsg) {
	if m.escAt.Equal(msg.at) {
		m.forgetEsc()
	}
}
