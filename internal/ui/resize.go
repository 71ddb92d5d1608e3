package ui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// A terminal that gets narrower re-wraps (reflows) the lines on its
// screen, the live area's included, so the live area then takes more rows
// above the cursor than Bubble Tea knows of, and its redraw would leave the
// top rows behind as fragments. Before Bubble Tea learns the new size, the
// cursor is moved up by the rows the reflow added, so the redraw starts at
// the live area's real top and erases all of it.

// reflowMsg is a narrower window size held back until the cursor has been
// moved.
type reflowMsg struct{ size tea.WindowSizeMsg }

// reflowDoneMsg follows the cursor move; the filter turns it into the
// newest window size, which is what the program then gets.
type reflowDoneMsg struct{}

// resizeFilter is the program's event filter: it holds back a narrowing
// resize as a reflowMsg, and ends it with the newest size seen meanwhile.
// (Releasing the held size itself would undo a resize that arrived while
// the cursor moved: tmux sends one per dimension, and a model and renderer
// left at a stale height misplace every later insertion.)
func resizeFilter(tm tea.Model, msg tea.Msg) tea.Msg {
	m, ok := tm.(*model)
	if !ok {
		return msg
	}
	if _, done := msg.(reflowDoneMsg); done {
		return m.latestSize
	}
	ws, isSize := msg.(tea.WindowSizeMsg)
	if !isSize {
		return msg
	}
	m.latestSize = ws
	if !m.reflows || m.resizing || m.lastView == nil || ws.Width >= m.width {
		return msg
	}
	m.resizing = true
	return reflowMsg{size: ws}
}

// reflow moves the cursor to where the live area's top row went, keeping
// the live area as it is until Bubble Tea has the new size.
func (m *model) reflow(msg reflowMsg) tea.Cmd {
	size := msg.size
	extra := reflowRows(m.lastView, size.Width)
	resize := func() tea.Msg { return reflowDoneMsg{} }
	if extra == 0 {
		return resize
	}
	return tea.Sequence(tea.Raw(ansi.CursorUp(extra)), resize)
}

// reflowRows is how many rows a terminal of the given width adds above the
// cursor when it re-wraps the view's lines.
func reflowRows(v *tea.View, width int) int {
	if width <= 0 || v.Cursor == nil {
		return 0
	}
	lines := strings.Split(v.Content, "\n")
	extra := 0
	for i := 0; i < v.Cursor.Y && i < len(lines); i++ {
		w := ansi.StringWidth(strings.TrimRight(ansi.Strip(lines[i]), " "))
		if w > width {
			extra += (w - 1) / width
		}
	}
	return extra + v.Cursor.X/width
}

// terminalReflows guesses whether the terminal re-wraps its lines when it
// gets narrower: tmux, kitty, iTerm2, VTE, Windows Terminal, Alacritty and
// WezTerm do; xterm does not.
func terminalReflows(getenv func(string) string) bool {
	return getenv("XTERM_VERSION") == "" || getenv("TMUX") != ""
}
