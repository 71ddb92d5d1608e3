package ui

import (
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// print queues text for the scrollback above the live area, wrapped to
// less than the terminal's width (the terminal would cut words apart, and
// a full-width line is counted as two by Bubble Tea's insertion).
func (m *model) print(text string) {
	m.outbox = append(m.outbox, strings.Split(ansi.Wrap(text, m.width-1, ""), "\n")...)
}

// printLines queues lines that are already at most the terminal's width.
func (m *model) printLines(lines []string) {
	for _, l := range lines {
		m.print(l)
	}
}

// renderStream moves the streamed text forward: final lines go to the
// scrollback, the rest stays in the live area. Rendering is skipped while
// the last one is recent (deltas can arrive by the hundred per second);
// the spinner's tick catches up.
func (m *model) renderStream(final bool) {
	now := m.now()
	if !final && now.Sub(m.lastRender) < frameEvery {
		return
	}
	m.lastRender = now
	m.printLines(m.st.advance(final))
}

// printChunk is how many lines one insertion above the live area may
// carry: Bubble Tea scrolls the screen by the inserted height and then
// moves up over it, so an insertion taller than the room above the live
// area would push the live area itself into the scrollback. Half of that
// room leaves a margin for a terminal that shrinks before Bubble Tea
// learns its new size.
func (m *model) printChunk() int { return max((m.height-m.liveCap())/2, 1) }

// flush hands the queued output to the terminal, one insertion at a time
// so it keeps its order, and quits once everything is out and nothing runs.
func (m *model) flush() tea.Cmd {
	if m.printing || m.resizing || !m.ready {
		return nil // the next insertion needs the size the screen has now
	}
	if len(m.outbox) > 0 {
		n := min(len(m.outbox), m.printChunk())
		text := strings.Join(m.outbox[:n], "\n")
		m.outbox, m.printing = m.outbox[n:], true
		return m.printCmd(text)
	}
	if m.quitting && m.op == opNone && !m.quit {
		m.quit = true
		return tea.Quit
	}
	return nil
}

// insertAbove prints text above the live area (Bubble Tea's Println),
// unless the terminal's size is no longer the one the model knows: Bubble
// Tea places the insertion by the frame it drew at the old size, and a
// terminal that re-wrapped or shrank meanwhile would get it in the wrong
// rows, where the next redraw erases lines of it. Such text comes back as
// heldPrintMsg and goes out after the resize has been handled.
func (m *model) insertAbove(text string) tea.Cmd {
	return tea.Sequence(m.printAtThisSize(text), func() tea.Msg { return printedMsg{} })
}

// printAtThisSize is Println's command if the terminal still has the size
// the model knows (read when the command runs, just before Bubble Tea
// writes), else one that gives the text back as heldPrintMsg.
func (m *model) printAtThisSize(text string) tea.Cmd {
	width, height, size := m.width, m.height, m.termSize
	if m.holds >= maxHolds {
		size = nil
	}
	print := tea.Println(text)
	return func() tea.Msg {
		if size != nil {
			if w, h, ok := size(); ok && (max(w, 10) != width || max(h, 4) != height) {
				return heldPrintMsg{text: text}
			}
		}
		return print()
	}
}

// maxHolds is how many insertions in a row may wait for a window size.
const maxHolds = 3

// hold puts text that was not printed back at the head of the queue; it
// goes out once a frame has been drawn at the new size (the resize's own
// readyMsg, or this one's if the resize was handled already).
func (m *model) hold(text string) tea.Cmd {
	m.holds++
	m.outbox = append(strings.Split(text, "\n"), m.outbox...)
	m.ready = false
	m.readyGen++
	gen := m.readyGen
	return tea.Tick(3*frameEvery, func(time.Time) tea.Msg { return readyMsg{gen: gen} })
}

func addUsage(a, b session.Usage) session.Usage {
	return session.Usage{Input: a.Input + b.Input, Output: a.Output + b.Output, CacheRead: a.CacheRead + b.CacheRead, CacheWrite: a.CacheWrite + b.CacheWrite}
}
