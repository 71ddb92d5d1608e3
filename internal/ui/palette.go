package ui

import (
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/tiny-agent/tiny-go/internal/commands"
)

// menuRows is the most commands the menu shows at once.
const menuRows = 8

// menu is the command menu shown under the input while it holds a lone
// "/word": the commands whose name matches, one a line with its
// description. Up and Down move, Tab completes, Enter runs the choice.
type menu struct {
	items   []commands.Command
	sel     int
	filter  string // the typed word (without the slash) items match
	dismiss string // Esc hid the menu for this input
}

// allCommands are the built-ins followed by the custom commands.
func (m *model) allCommands() []commands.Command {
	return append(append([]commands.Command(nil), commands.Builtins...), m.custom...)
}

// menuWord is the command word being typed: the input is "/" and a word
// without spaces; ok is false otherwise.
func (m *model) menuWord() (string, bool) {
	v := m.input.Value()
	if !strings.HasPrefix(v, "/") || strings.ContainsAny(v, " \t\n") || strings.Count(v, "/") > 1 {
		return "", false
	}
	return v[1:], true
}

// syncMenu recomputes the menu after the input changed.
func (m *model) syncMenu() {
	word, ok := m.menuWord()
	if !ok || m.op != opNone || m.menuState.dismiss == m.input.Value() {
		m.menuState.items = nil
		return
	}
	if m.menuState.dismiss != "" {
		m.menuState.dismiss = ""
	}
	if word != m.menuState.filter || m.menuState.items == nil {
		m.menuState.sel = 0
	}
	m.menuState.filter = word
	m.menuState.items = commands.Match(m.allCommands(), word)
	if m.menuState.sel >= len(m.menuState.items) {
		m.menuState.sel = 0
	}
}

func (m *model) menuOpen() bool { return len(m.menuState.items) > 0 }

// menuKey handles a key while the menu is open; handled reports that the
// key was used up by it.
func (m *model) menuKey(k tea.KeyPressMsg) (tea.Cmd, bool) {
	if !m.menuOpen() {
		return nil, false
	}
	s := &m.menuState
	switch k.String() {
	case "up", "ctrl+p":
		s.sel = (s.sel + len(s.items) - 1) % len(s.items)
		return nil, true
	case "down", "ctrl+n":
		s.sel = (s.sel + 1) % len(s.items)
		return nil, true
	case "esc":
		s.dismiss = m.input.Value()
		s.items = nil
		return nil, true
	case "tab":
		m.completeCommand(s.items[s.sel], true)
		return nil, true
	case "enter":
		c := s.items[s.sel]
		if c.Name == "skill:" {
			m.completeCommand(c, false)
			return nil, true
		}
		m.input.SetValue("/" + c.Name)
		s.items = nil
		return m.submit(), true
	}
	return nil, false
}

// completeCommand puts the command in the input; space adds a space so
// arguments can follow (and the menu closes).
func (m *model) completeCommand(c commands.Command, space bool) {
	v := "/" + c.Name
	if space && c.Name != "skill:" {
		v += " "
	}
	m.input.SetValue(v)
	m.syncMenu()
}

// menuView is the menu's lines, the selection marked.
func (m *model) menuView() []string {
	s := m.menuState
	if len(s.items) == 0 {
		return nil
	}
	first := 0
	if s.sel >= menuRows {
		first = s.sel - menuRows + 1
	}
	var lines []string
	for i := first; i < len(s.items) && i < first+menuRows; i++ {
		c := s.items[i]
		name := "/" + c.Name
		if c.ArgHint != "" {
			if c.Name != "skill:" {
				name += " "
			}
			name += c.ArgHint
		}
		line := "  " + padRight(name, 20) + " " + sanitizeLine(c.Description)
		if !c.Builtin {
			line += faint.Render(" (custom)")
		}
		line = truncate(line, m.width-1)
		if i == s.sel {
			line = bold.Render(truncate("›"+line[1:], m.width-1))
		} else {
			line = faint.Render(line)
		}
		lines = append(lines, line)
	}
	if n := len(s.items); n > menuRows {
		lines = append(lines, faint.Render(truncate("  ↑↓ for more ("+strconv.Itoa(n)+" commands) · Tab completes · Enter runs", m.width-1)))
	}
	return lines
}
