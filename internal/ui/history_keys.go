package ui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// remember adds a submitted input to the history and to its file.
func (m *model) remember(value string) {
	m.hist.add(value)
	if m.store != nil && strings.TrimSpace(value) != "" {
		if err := m.store.Append(value); err != nil && m.notice == "" {
			m.notice = sanitizeLine(err.Error())
		}
	}
}

// searchKey handles a key during a Ctrl+R search; done reports that the
// key was used up by it.
func (m *model) searchKey(k tea.KeyPressMsg) (done bool) {
	s := m.search
	switch k.String() {
	case "ctrl+r":
		before := s.match
		if before < 0 {
			before = len(m.hist.entries)
		}
		if i := m.hist.find(s.query, before); i >= 0 {
			s.match = i
		}
	case "backspace":
		if r := []rune(s.query); len(r) > 0 {
			s.query = string(r[:len(r)-1])
			s.match = m.hist.find(s.query, len(m.hist.entries))
		}
	case "esc", "ctrl+g", "ctrl+c":
		m.input.SetValue(s.draft)
		m.endSearch()
		return true
	case "enter":
		m.endSearch() // the match stays in the input, to edit or send
		return true
	default:
		if k.Text == "" || k.Mod&^tea.ModShift != 0 {
			m.endSearch() // any other key keeps the match and acts
			return false
		}
		s.query += k.Text
		s.match = m.hist.find(s.query, len(m.hist.entries))
	}
	m.showSearch()
	return true
}

// showSearch puts the match in the input and the search in the notice.
func (m *model) showSearch() {
	s := m.search
	if s.match >= 0 {
		m.input.SetValue(m.hist.entries[s.match])
	}
	state := "search history"
	if s.match < 0 && s.query != "" {
		state = "no match in history"
	}
	m.notice = fmt.Sprintf("%s: %s▏ (Ctrl+R older · Enter keep · Esc cancel)", state, sanitizeLine(s.query))
}

func (m *model) endSearch() {
	m.search = nil
	m.notice = ""
	m.hist.pos, m.hist.draft = len(m.hist.entries), ""
}
