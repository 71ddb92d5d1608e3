package ui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/planmode"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// Plan mode in the terminal: Shift+Tab cycles ask -> auto -> plan, the
// mode is shown under the input (and in the status line), and a run that
// ends in plan mode offers its plan for acceptance.

// cycleMode is Shift+Tab.
func (m *model) cycleMode() tea.Cmd {
	if m.mode == nil {
		return nil
	}
	m.mode.Next()
	m.planReady = false
	return nil
}

// modeLine is the line under the input: the mode when it is not ask
// (ask is the default and says nothing, as in Claude Code).
func (m *model) modeLine() []string {
	switch m.mode.Mode() {
	case approval.Plan:
		return []string{faint.Render(truncate("⏸ plan mode: read-only ("+keyHint("Shift+Tab")+")", m.width))}
	case approval.Auto:
		if m.mode != nil {
			return []string{faint.Render(truncate("⏵⏵ auto mode: calls run without asking ("+keyHint("Shift+Tab")+")", m.width))}
		}
	case approval.Edits:
		return []string{faint.Render(truncate("⏵⏵ accept edits: edits and mkdir/touch/mv/cp/rm in this directory run without asking ("+keyHint("Shift+Tab")+")", m.width))}
	}
	return nil
}

// planDone offers the plan of a run that ended in plan mode.
func (m *model) planDone(res runDoneMsg) {
	if res.err != nil || res.result.Outcome != session.OutcomeCompleted || !m.mode.Planning() {
		return
	}
	m.planReady = true
}

// planView is the acceptance question under a finished plan.
func (m *model) planView() []string {
	if !m.planReady {
		return nil
	}
	return []string{
		bold.Render("Accept this plan?"),
		truncate("  1 yes, and run it in auto mode   2 yes, and ask before each change   3 no, keep planning (or type your changes)", m.width),
	}
}

// planKey answers the acceptance question: 1 and 2 leave plan mode and
// carry the plan out; 3 and Esc keep planning; typing anything else
// dismisses the question and becomes the user's changes.
func (m *model) planKey(k tea.KeyPressMsg) (tea.Cmd, bool) {
	if !m.planReady || m.op != opNone || m.input.Value() != "" {
		return nil, false
	}
	switch k.String() {
	case "1", "2":
		m.planReady = false
		next := approval.Auto
		if k.String() == "2" {
			next = approval.Ask
		}
		m.mode.Set(next)
		m.print(faint.Render("  ⎿ plan accepted; " + string(next) + " mode"))
		return m.startRun(planmode.Accepted), true
	case "3", "esc":
		m.planReady = false
		return nil, true
	}
	m.planReady = false
	return nil, false
}
