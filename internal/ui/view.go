package ui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// View is the live area: the tail of the streaming reply, the status line
// while an operation runs, a notice, and the input box. Everything else
// has been printed above it.
func (m *model) View() tea.View {
	if m.quit {
		return tea.NewView("") // the last frame leaves nothing behind
	}
	if m.resizing && m.lastView != nil {
		return *m.lastView
	}
	v := m.view()
	m.lastView = &v
	return v
}

func (m *model) view() tea.View {
	lines := m.thinking.view(m.width)
	if len(m.st.live) > 0 {
		lines = append(lines, liveLines(m.st.live, m.width, max(m.liveRoom()-len(lines), 1))...)
	}
	lines = append(lines, m.todoView()...)
	if m.op != opNone {
		lines = append(lines, truncate(m.statusLine(), m.width))
	}
	if len(m.forms) > 0 {
		return m.formFrame(lines) // the form takes the input box's place
	}
	lines = append(lines, m.approvalView()...)
	if m.notice != "" {
		lines = append(lines, faint.Render(truncate(m.notice, m.width)))
	}
	lines = append(lines, m.planView()...)
	above := len(lines)
	lines = append(lines, m.input.View())
	lines = append(lines, m.modeLine()...)
	lines = append(lines, m.menuView()...)
	lines = append(lines, m.mentionView()...)

	v := tea.NewView(strings.Join(lines, "\n"))
	if c := m.input.Cursor(); c != nil {
		c.Y += above
		v.Cursor = c
	}
	return v
}

// statusLine is the spinner, what is being waited for and for how long.
func (m *model) statusLine() string {
	now := m.now()
	frame := spinnerFrames[m.frame%len(spinnerFrames)]
	hint := " · " + keyHint("Esc")
	if m.aborting || len(m.forms) > 0 { // Esc cancels the form
		hint = ""
	}
	if m.retrying {
		// A wait counts down to the next send; once it is sent, the time
		// since then (the reply replaces the line).
		if left := m.retryUntil.Sub(now); left > 0 {
			secs := int((left + time.Second - 1) / time.Second)
			return fmt.Sprintf("%s retrying in %ds: %s%s", frame, secs, m.retryCause, faint.Render(hint))
		}
		secs := int(now.Sub(m.retryUntil).Seconds())
		return fmt.Sprintf("%s Sending again after %s… %ds%s", frame, m.retryCause, secs, faint.Render(hint))
	}
	secs := int(now.Sub(m.phaseStart).Seconds())
	if m.mode.Planning() {
		hint = " · plan mode" + hint
	}
	return fmt.Sprintf("%s %s… %ds%s", frame, m.phase, secs, faint.Render(hint))
}

// liveCap is the most lines the live area may take: a third of the
// screen, so the scrollback can take the rest in one insertion, and the
// live area still fits on the screen when a narrower terminal re-wraps
// each of its lines into two.
func (m *model) liveCap() int { return max(m.height/3, 4) }

// liveRoom is how many lines of streaming text fit in the live area above
// the status line and the input.
func (m *model) liveRoom() int {
	return max(m.liveCap()-m.input.Height()-2, 1)
}

// liveLines are the streamed lines still in progress, wrapped to the
// terminal (a block keeps the width it started with) and cut to the last n.
func liveLines(lines []string, width, n int) []string {
	if len(lines) > n {
		lines = lines[len(lines)-n:] // wrapping only adds lines
	}
	var out []string
	for _, l := range lines {
		out = append(out, strings.Split(ansi.Wrap(l, width-1, ""), "\n")...)
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// streamTail wraps text to width and returns its last n lines. Only the
// end of a long text is wrapped, so a long stream costs the same per
// frame as a short one.
func streamTail(text string, width, n int) []string {
	if budget := 4 * width * (n + 1); len(text) > budget {
		cut := len(text) - budget
		// Start at a line if one starts early enough, so the wrapping of
		// the visible lines does not shift while the text grows.
		if i := strings.IndexByte(text[cut:], '\n'); i >= 0 && i < budget/2 {
			cut += i + 1
		}
		text = text[cut:]
		for len(text) > 0 && !isRuneStart(text[0]) {
			text = text[1:]
		}
	}
	text = strings.ReplaceAll(text, "\t", "    ")
	wrapped := strings.Split(ansi.Wrap(strings.TrimRight(text, "\n"), width, ""), "\n")
	if len(wrapped) > n {
		wrapped = wrapped[len(wrapped)-n:]
	}
	return wrapped
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
