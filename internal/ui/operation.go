package ui

import (
	"context"
	"errors"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/interrupt"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// Results of the engine calls, delivered by their commands.
type (
	runDoneMsg struct {
		result agent.Result
		err    error
	}
	compactDoneMsg struct {
		result agent.Result
		stats  agent.CompactStats
		err    error
	}
	abortDoneMsg struct {
		seq int // opSeq when the abort was issued
		ok  bool
		err error
	}
	// printedMsg follows the output handed to the terminal, so the next
	// output cannot overtake it.
	printedMsg struct{}
	tickMsg    struct{ gen int }
	readyMsg   struct{ gen int }
	// heldPrintMsg is output not printed because the terminal's size had
	// changed (see insertAbove).
	heldPrintMsg struct{ text string }
	// interruptMsg is SIGINT, SIGTERM or SIGHUP: the Ctrl+C path.
	interruptMsg struct{}
)

func (m *model) startRun(prompt string) tea.Cmd {
	m.beginOp(opRun, "Thinking")
	eng, ctx, calls := m.eng, m.ctx, m.calls
	calls.Add(1)
	return tea.Batch(m.tick(), func() tea.Msg {
		defer calls.Done()
		res, err := eng.Run(ctx, prompt)
		return runDoneMsg{result: res, err: err}
	})
}

func (m *model) startCompact() tea.Cmd {
	m.beginOp(opCompact, "Compacting")
	eng, ctx, calls := m.eng, m.ctx, m.calls
	calls.Add(1)
	return tea.Batch(m.tick(), func() tea.Msg {
		defer calls.Done()
		res, st, err := eng.Compact(ctx)
		return compactDoneMsg{result: res, stats: st, err: err}
	})
}

func (m *model) beginOp(k opKind, phase string) {
	m.op, m.opSeq, m.aborting, m.abortInFlight = k, 0, false, false
	m.st.reset()
	m.lastStepText = ""
	m.usage.reset()
	m.tickGen++
	m.setPhase(phase)
}

func (m *model) endOp() {
	m.op = opNone
	m.aborting, m.abortInFlight = false, false
	m.st.reset()
	m.phase = ""
	if !m.quitting {
		m.notice = ""
	}
}

// setPhase names what the status line waits for; once an abort is asked
// for, that is all it waits for.
func (m *model) setPhase(p string) {
	if m.aborting && m.phase == "Aborting" {
		return
	}
	m.phase, m.phaseStart, m.retrying = p, m.now(), false
}

func (m *model) tick() tea.Cmd {
	gen := m.tickGen
	return tea.Tick(tickEvery, func(time.Time) tea.Msg { return tickMsg{gen: gen} })
}

// opStarted notes an agent operation; an abort the user asked for before
// it existed (or for an earlier one, such as an automatic compaction)
// applies to it too.
func (m *model) opStarted(msg opStartedMsg) tea.Cmd {
	if m.op == opNone {
		return nil
	}
	m.opSeq++
	if msg.kind == session.OperationCompaction && m.op == opRun {
		m.setPhase("Compacting")
	}
	if m.aborting && !m.abortInFlight {
		return m.abortCmd()
	}
	return nil
}

// abort asks the engine to abort op, once; the call runs off the UI
// goroutine.
func (m *model) abort() tea.Cmd {
	if m.aborting {
		return nil
	}
	m.aborting = true
	m.setPhase("Aborting")
	if m.op == opShell {
		if m.cancelShell != nil {
			m.cancelShell()
		}
		return nil
	}
	return m.abortCmd()
}

func (m *model) abortCmd() tea.Cmd {
	m.abortInFlight = true
	eng, ctx, calls, seq := m.eng, context.WithoutCancel(m.ctx), m.calls, m.opSeq
	calls.Add(1)
	return func() tea.Msg {
		defer calls.Done()
		ok, err := eng.Abort(ctx)
		return abortDoneMsg{seq: seq, ok: ok, err: err}
	}
}

func (m *model) abortDone(msg abortDoneMsg) tea.Cmd {
	m.abortInFlight = false
	if m.op == opNone {
		return nil
	}
	if msg.err != nil {
		m.print(errStyle.Render("Abort failed: " + sanitizeLine(msg.err.Error())))
		m.aborting = false
		return nil
	}
	if !msg.ok && msg.seq != m.opSeq && m.aborting {
		// An operation started while the abort was on its way.
		return m.abortCmd()
	}
	return nil
}

// interrupt is Ctrl+C (or a signal), by the interrupt policy: abort what
// is active, then exit when it has ended; past the policy's grace another
// one cancels the engine's context.
func (m *model) interrupt() tea.Cmd {
	switch m.interrupts.Interrupt(m.op != opNone) {
	case interrupt.Exit:
		return m.exit()
	case interrupt.Abort:
		m.quitting = true
		m.notice = "Exiting once the operation has stopped."
		return m.abort()
	case interrupt.Hold:
		m.notice = "Aborting; Ctrl+C again to stop at once."
		return nil
	}
	if !m.forced {
		m.forced = true
		m.notice = "Stopping now."
		m.force()
	}
	return nil
}

func (m *model) exit() tea.Cmd {
	m.quitting = true
	return nil
}

func (m *model) modelDone(msg modelDoneMsg) {
	text := m.st.src
	// Everything streamed is committed, also what arrived before an
	// attempt failed or was cancelled: it was on the screen.
	m.renderStream(true)
	m.st.reset()
	m.setPhase("Working")
	if msg.outcome.Outcome == "succeeded" {
		m.lastStepText = text
		if lines := SourceLines(msg.outcome.Sources); lines != nil {
			m.print(faint.Render(strings.Join(lines, "\n")))
		}
	}
}

func (m *model) runDone(msg runDoneMsg) {
	switch {
	case msg.err != nil && m.forced && errors.Is(msg.err, context.Canceled):
		m.print(errStyle.Render("Stopped."))
	case msg.err != nil:
		m.print(errStyle.Render(errorLine(msg.err)))
	default:
		res := msg.result
		if res.Answer != "" && strings.TrimSpace(m.lastStepText) == "" {
			m.print(m.md.render(res.Answer, m.width)) // nothing was streamed
		}
		if !m.usage.zero() {
			m.print(faint.Render(m.usage.line() + " · " + sanitizeLine(m.banner.Model)))
		}
		if line := runOutcomeLine(res, m.banner.SessionID); line != "" {
			m.print(errStyle.Render(line))
		}
	}
	m.planDone(msg)
	m.endOp()
}

func (m *model) compactDone(msg compactDoneMsg) {
	line := compactOutcomeLine(msg.result, msg.stats, msg.err, m.banner.SessionID)
	refused := errors.Is(msg.err, agent.ErrNothingToCompact)
	done := msg.err == nil && msg.result.Blocked == "" && msg.result.Outcome == session.OutcomeCompleted
	if !refused && !done {
		line = errStyle.Render(line)
	}
	m.print(line)
	m.endOp()
}
