package ui

import (
	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// A subagent's progress is shown as whole lines under its task call,
// "  ⎿ [explore] ◆ bash ls": each line is written at once under the
// display's lock, so parallel children never interleave within a line.

// lineMsg is a line printed above the live area as it is (dimmed).
type lineMsg struct{ line string }

// ChildLine is the line that shows a subagent's event, "" for events not
// shown (streamed text, model requests).
func ChildLine(label string, ev agent.Event) string {
	head := "  ⎿ [" + sanitizeLine(label) + "] "
	switch ev := ev.(type) {
	case agent.ToolStarted:
		return truncate(head+toolStartLine(ev.Tool, lineWidth), lineWidth)
	case agent.ToolCompleted:
		return truncate(head+"  └ "+buildReport(ev.Tool, ev.Outcome, nil).summary, lineWidth)
	case agent.OperationCompleted:
		switch {
		case ev.Result.Blocked != "":
			return head + "blocked: " + sanitizeLine(ev.Result.Blocked)
		case ev.Result.Outcome == session.OutcomeAborted:
			return head + "aborted"
		case ev.Result.Outcome == session.OutcomeFailed:
			return head + "failed"
		}
		return head + "done"
	}
	return ""
}

// Line shows one line above the live area; false when no display is
// attached.
func (o *Observer) Line(line string) bool {
	return o.send(lineMsg{line: line})
}

// Line writes one whole line to stderr.
func (s *OneShot) Line(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errLine(s.styles.dim.Render(line))
}
