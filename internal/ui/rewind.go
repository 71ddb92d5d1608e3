package ui

import (
	"context"
	"fmt"
	"github.com/tiny-agent/tiny-go/internal/commands"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
)

// /rewind: put files and the conversation back to before an earlier user
// turn. "/rewind" lists the turns; "/rewind N [files|conversation]
// [force]" shows what the rewind will do and asks for y; the result is
// shown after it. The work itself is the Rewinder's (the cli's).

// Rewinder carries out /rewind.
type Rewinder interface {
	// Turns lists the session's user turns, oldest first.
	Turns() ([]RewindTurn, error)
	// Plan works out what a rewind will do, changing nothing.
	Plan(ctx context.Context, req RewindRequest) (*RewindPlan, error)
	// Apply carries out a plan. When the conversation was rewound, the
	// result names the session that continues (the engine now drives it).
	Apply(ctx context.Context, plan *RewindPlan) (RewindResult, error)
}

// RewindTurn is one user turn to choose from.
type RewindTurn struct {
	N      int
	Prompt string
	At     time.Time
}

// RewindRequest is a parsed /rewind N.
type RewindRequest = commands.RewindArgs

// RewindPlan is a planned rewind: the lines to show before asking, and
// the Rewinder's own state.
type RewindPlan struct {
	Request RewindRequest
	Preview []string
	State   any
}

// RewindResult is what a rewind did.
type RewindResult struct {
	Lines []string
	// SessionID is the session that continues after a conversation
	// rewind ("" when the conversation was kept).
	SessionID string
	// Prompt is the rewound turn's prompt, offered again in the input.
	Prompt string
}

// turnLines is the list that /rewind shows.
func turnLines(turns []RewindTurn) []string {
	if len(turns) == 0 {
		return []string{"No earlier turn to rewind to."}
	}
	lines := []string{"Earlier turns (a rewind puts files and the conversation back to before one):"}
	for _, t := range turns {
		lines = append(lines, fmt.Sprintf("  %2d  %s  %s", t.N, t.At.Local().Format("15:04"), truncate(sanitizeLine(t.Prompt), 70)))
	}
	return append(lines, "Type a turn number to rewind files and conversation (N files or N conversation does half; add force to overwrite files you changed since); anything else cancels.")
}

// rewindState is the TUI's rewind in progress.
type rewindState struct {
	choosing bool        // the turns are listed, waiting for a number
	plan     *RewindPlan // planned, waiting for y
	busy     bool        // planning or applying
}

type (
	rewindPlannedMsg struct {
		plan *RewindPlan
		err  error
	}
	rewindDoneMsg struct {
		res RewindResult
		err error
	}
)

// rewindSubmit handles a submitted input while a rewind waits for its
// confirmation or runs; handled is false otherwise.
func (m *model) rewindSubmit(value string) (tea.Cmd, bool) {
	if m.rewind == nil {
		return nil, false
	}
	if m.rewind.busy {
		m.notice = "A rewind is in progress."
		return nil, true
	}
	plan, choosing := m.rewind.plan, m.rewind.choosing
	m.rewind = nil
	m.input.Reset()
	m.print(bold.Render(echoLines(strings.TrimSpace(value))))
	if choosing {
		if req, list, err := commands.ParseRewind(value); err == nil && !list {
			return m.planRewind(req), true
		}
		m.print(faint.Render("Rewind cancelled; nothing changed."))
		return nil, true
	}
	if a := strings.ToLower(strings.TrimSpace(value)); a != "y" && a != "yes" {
		m.print(faint.Render("Rewind cancelled; nothing changed."))
		return nil, true
	}
	return m.rewindWork("Rewinding", func(rw Rewinder, ctx context.Context) tea.Msg {
		res, err := rw.Apply(ctx, plan)
		return rewindDoneMsg{res: res, err: err}
	}), true
}

// rewindCommand runs /rewind [args].
func (m *model) rewindCommand(args string) tea.Cmd {
	if m.rewinder == nil {
		m.print(errStyle.Render("Rewind is not available."))
		return nil
	}
	req, list, err := commands.ParseRewind(args)
	if err != nil {
		m.print(errStyle.Render(err.Error()))
		return nil
	}
	if list {
		turns, err := m.rewinder.Turns()
		if err != nil {
			m.print(errStyle.Render(sanitizeLine(err.Error())))
			return nil
		}
		m.print(strings.Join(turnLines(turns), "\n"))
		if len(turns) > 0 {
			m.rewind = &rewindState{choosing: true}
		}
		return nil
	}
	return m.planRewind(req)
}

func (m *model) planRewind(req RewindRequest) tea.Cmd {
	return m.rewindWork("Planning the rewind", func(rw Rewinder, ctx context.Context) tea.Msg {
		plan, err := rw.Plan(ctx, req)
		return rewindPlannedMsg{plan: plan, err: err}
	})
}

// rewindWork runs one step of a rewind off the UI's goroutine, with the
// status line naming it; the UI waits for it before it exits.
func (m *model) rewindWork(phase string, work func(rw Rewinder, ctx context.Context) tea.Msg) tea.Cmd {
	m.rewind = &rewindState{busy: true}
	m.setPhase(phase)
	rw, ctx, calls := m.rewinder, m.ctx, m.calls
	calls.Add(1)
	return func() tea.Msg {
		defer calls.Done()
		return work(rw, ctx)
	}
}

// rewindUpdate handles the rewind's messages; handled is false for others.
func (m *model) rewindUpdate(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case rewindPlannedMsg:
		m.phase = ""
		if msg.err != nil {
			m.rewind = nil
			m.print(errStyle.Render(sanitizeLine(msg.err.Error())))
			return nil, true
		}
		m.rewind = &rewindState{plan: msg.plan}
		m.print(strings.Join(append(sanitizeAll(msg.plan.Preview), "Rewind? y to do it, anything else cancels."), "\n"))
		return nil, true
	case rewindDoneMsg:
		m.phase = ""
		m.rewind = nil
		if msg.err != nil {
			m.print(errStyle.Render(sanitizeLine(msg.err.Error())))
			return nil, true
		}
		m.print(strings.Join(sanitizeAll(msg.res.Lines), "\n"))
		if msg.res.SessionID != "" {
			m.banner.SessionID = msg.res.SessionID
		}
		if msg.res.Prompt != "" && m.input.Value() == "" {
			m.input.SetValue(msg.res.Prompt)
		}
		return nil, true
	}
	return nil, false
}

func sanitizeAll(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.ReplaceAll(sanitize(l), "\n", " ") // keeps the columns
	}
	return out
}

// rewindLine runs /rewind in line mode; confirm reads the answer.
func (r *lineRunner) rewindLine(ctx context.Context, args string) {
	rw := r.opts.Rewinder
	if rw == nil {
		r.pr.println("Rewind is not available.")
		return
	}
	req, list, err := commands.ParseRewind(args)
	if err != nil {
		r.pr.println(err.Error())
		return
	}
	if list {
		turns, err := rw.Turns()
		if err != nil {
			r.pr.println(sanitizeLine(err.Error()))
			return
		}
		for _, l := range turnLines(turns) {
			r.pr.println(l)
		}
		r.choosingRewind = len(turns) > 0
		return
	}
	r.planRewind(ctx, req)
}

func (r *lineRunner) planRewind(ctx context.Context, req RewindRequest) {
	plan, err := r.opts.Rewinder.Plan(ctx, req)
	if err != nil {
		r.pr.println(sanitizeLine(err.Error()))
		return
	}
	for _, l := range sanitizeAll(plan.Preview) {
		r.pr.println(l)
	}
	r.pr.println("Rewind? y to do it, anything else cancels.")
	r.pendingRewind = plan
}

// confirmRewind answers a pending rewind with the next input line;
// handled is false when none is pending.
func (r *lineRunner) confirmRewind(ctx context.Context, line string) bool {
	if r.choosingRewind {
		r.choosingRewind = false
		if req, list, err := commands.ParseRewind(line); err == nil && !list {
			r.planRewind(ctx, req)
		} else {
			r.pr.println("Rewind cancelled; nothing changed.")
		}
		return true
	}
	plan := r.pendingRewind
	if plan == nil {
		return false
	}
	r.pendingRewind = nil
	if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
		r.pr.println("Rewind cancelled; nothing changed.")
		return true
	}
	res, err := r.opts.Rewinder.Apply(ctx, plan)
	if err != nil {
		r.pr.println(sanitizeLine(err.Error()))
		return true
	}
	for _, l := range sanitizeAll(res.Lines) {
		r.pr.println(l)
	}
	if res.SessionID != "" {
		r.opts.Banner.SessionID = res.SessionID
	}
	return true
}
