package ui

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// opKind is the user-level operation in progress: one Run or Compact call
// (a Run may contain an automatic compaction and then the run).
type opKind int

const (
	opNone opKind = iota
	opRun
	opCompact
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
	// interruptMsg is SIGINT, SIGTERM or SIGHUP: the Ctrl+C path.
	interruptMsg struct{}
)

// tickEvery is the spinner's frame interval.
const tickEvery = 100 * time.Millisecond

var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

var (
	faint     = lipgloss.NewStyle().Faint(true)
	bold      = lipgloss.NewStyle().Bold(true)
	errStyle  = lipgloss.NewStyle().Foreground(lipgloss.Color("1"))
	toolStyle = lipgloss.NewStyle().Foreground(lipgloss.Color("6"))
)

// model is the interactive UI. Its pointer is the tea.Model; all fields
// are touched only by Update and View, on the program's goroutine.
type model struct {
	eng    Engine
	ctx    context.Context // for engine calls; cancelled only by a forced exit
	force  context.CancelFunc
	calls  *sync.WaitGroup // engine calls in flight
	banner Banner
	expand func(string) (string, error)
	now    func() time.Time

	input  textarea.Model
	hist   history
	width  int
	height int
	md     markdown

	op            opKind
	opSeq         int  // agent operations started within op
	aborting      bool // the user asked to abort op
	abortInFlight bool
	phase         string
	phaseStart    time.Time
	stream        strings.Builder // text of the model step being streamed
	lastStepText  string          // text of the last completed model step
	usage         session.Usage   // of the agent operations within op
	tickGen       int
	frame         int

	notice string // one transient line under the input

	outbox   []string
	printing bool
	// printCmd hands text to the terminal and then reports printedMsg.
	printCmd func(string) tea.Cmd

	quitting bool // exit once op has ended and the output is flushed
	forced   bool // a second Ctrl+C: the engine context is cancelled
	quit     bool // tea.Quit was returned
}

func newModel(ctx context.Context, eng Engine, banner Banner, expand func(string) (string, error)) *model {
	ctx, force := context.WithCancel(ctx)
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.SetPromptFunc(2, func(p textarea.PromptInfo) string {
		if p.LineNumber == 0 {
			return "> "
		}
		return "  "
	})
	ta.DynamicHeight = true
	ta.MinHeight = 1
	ta.MaxHeight = 10
	ta.CharLimit = 0
	ta.SetVirtualCursor(false)
	st := textarea.DefaultStyles(true)
	st.Focused.CursorLine = lipgloss.NewStyle()
	st.Focused.Prompt = bold
	st.Blurred.CursorLine = lipgloss.NewStyle()
	ta.SetStyles(st)
	// Enter sends (handled before the textarea sees it); these insert a
	// newline.
	ta.KeyMap.InsertNewline.SetKeys("alt+enter", "ctrl+j", "shift+enter")
	ta.Focus()

	m := &model{
		eng:    eng,
		ctx:    ctx,
		force:  force,
		calls:  &sync.WaitGroup{},
		banner: banner,
		expand: expand,
		now:    time.Now,
		input:  ta,
		width:  80,
		height: 24,
	}
	m.printCmd = func(text string) tea.Cmd {
		return tea.Sequence(tea.Println(text), func() tea.Msg { return printedMsg{} })
	}
	m.input.SetWidth(m.width)
	return m
}

func (m *model) Init() tea.Cmd {
	m.print(strings.Join(bannerLines(m.banner), "\n"))
	return tea.Batch(tea.RequestBackgroundColor, m.flush())
}

func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	return m, tea.Batch(cmd, m.flush())
}

func (m *model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 10), max(msg.Height, 4)
		m.input.SetWidth(m.width)
		return nil
	case tea.BackgroundColorMsg:
		m.md.setLight(!msg.IsDark())
		return nil
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.PasteMsg:
		msg.Content = strings.ReplaceAll(strings.ReplaceAll(msg.Content, "\r\n", "\n"), "\r", "\n")
		return m.updateInput(msg)
	case interruptMsg:
		return m.interrupt()
	case printedMsg:
		m.printing = false
		return nil
	case tickMsg:
		if m.op == opNone || msg.gen != m.tickGen {
			return nil
		}
		m.frame++
		return m.tick()

	case opStartedMsg:
		return m.opStarted(msg)
	case modelStartedMsg:
		m.setPhase("Thinking")
		m.stream.Reset()
		return nil
	case deltaMsg:
		if m.stream.Len() == 0 {
			m.setPhase("Writing")
		}
		m.stream.WriteString(sanitize(msg.text))
		return nil
	case modelDoneMsg:
		m.modelDone(msg)
		return nil
	case toolStartedMsg:
		m.print(toolStyle.Render(toolStartLine(msg.info, m.width)))
		m.setPhase("Running " + sanitizeLine(msg.info.Display))
		return nil
	case toolDoneMsg:
		line := toolResultLine(msg.info, msg.outcome)
		if msg.outcome.Outcome != "succeeded" {
			line = errStyle.Render(line)
		}
		m.print(line)
		m.setPhase("Working")
		return nil
	case cancelRequestedMsg:
		if m.op != opNone {
			m.setPhase("Aborting")
		}
		return nil
	case opDoneMsg:
		m.usage = addUsage(m.usage, msg.outcome.Usage)
		return nil

	case runDoneMsg:
		m.runDone(msg)
		return nil
	case compactDoneMsg:
		m.print(m.styleOutcome(compactOutcomeLine(msg.result, msg.stats, msg.err, m.banner.SessionID)))
		m.endOp()
		return nil
	case abortDoneMsg:
		return m.abortDone(msg)
	}
	return m.updateInput(msg)
}

// key handles a key press. Only a lone Esc aborts: arrows and other
// sequences arrive as their own keys, parsed by Bubble Tea.
func (m *model) key(k tea.KeyPressMsg) tea.Cmd {
	switch k.String() {
	case "ctrl+c":
		return m.interrupt()
	case "esc":
		if m.op == opNone {
			return nil
		}
		return m.abort()
	case "enter":
		return m.submit()
	case "ctrl+d":
		if m.op == opNone && m.input.Value() == "" {
			return m.exit()
		}
	case "up":
		if m.onFirstLine() {
			if s, ok := m.hist.prev(m.input.Value()); ok {
				m.input.SetValue(s)
				return nil
			}
		}
	case "down":
		if m.onLastLine() {
			if s, ok := m.hist.next(); ok {
				m.input.SetValue(s)
				return nil
			}
		}
	}
	return m.updateInput(k)
}

func (m *model) updateInput(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return cmd
}

func (m *model) onFirstLine() bool {
	return m.input.Line() == 0 && m.input.LineInfo().RowOffset == 0
}

func (m *model) onLastLine() bool {
	li := m.input.LineInfo()
	return m.input.Line() == m.input.LineCount()-1 && li.RowOffset >= li.Height-1
}

// submit sends the input: a command or a prompt.
func (m *model) submit() tea.Cmd {
	value := m.input.Value()
	c := parseCommand(value)
	if c.kind == cmdNone {
		return nil
	}
	if m.op != opNone {
		m.notice = "An operation is running; Esc aborts it."
		return nil
	}
	m.notice = ""
	m.hist.add(value)
	m.input.Reset()
	m.print(bold.Render(echoLines(strings.TrimSpace(value))))
	switch c.kind {
	case cmdExit:
		return m.exit()
	case cmdCompact:
		return m.startCompact()
	case cmdSkill:
		if m.expand == nil {
			m.print(errStyle.Render("Skills are not available."))
			return nil
		}
		text, err := m.expand(c.text)
		if err != nil {
			m.print(errStyle.Render(sanitizeLine(err.Error())))
			return nil
		}
		return m.startRun(text)
	case cmdInvalid:
		m.print(errStyle.Render(c.text))
		return nil
	}
	return m.startRun(c.text)
}

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
	m.stream.Reset()
	m.lastStepText, m.usage = "", session.Usage{}
	m.tickGen++
	m.setPhase(phase)
}

func (m *model) endOp() {
	m.op = opNone
	m.aborting, m.abortInFlight = false, false
	m.stream.Reset()
	m.phase = ""
	if !m.quitting {
		m.notice = ""
	}
}

func (m *model) setPhase(p string) {
	m.phase, m.phaseStart = p, m.now()
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

// interrupt is Ctrl+C (or a signal): abort what is active, then exit when
// it has ended; a second one while waiting cancels the engine's context.
func (m *model) interrupt() tea.Cmd {
	if m.op == opNone {
		return m.exit()
	}
	if m.quitting && !m.forced {
		m.forced = true
		m.notice = "Stopping now."
		m.force()
		return nil
	}
	m.quitting = true
	m.notice = "Exiting once the operation has stopped (Ctrl+C again to force)."
	return m.abort()
}

func (m *model) exit() tea.Cmd {
	m.quitting = true
	return nil
}

func (m *model) modelDone(msg modelDoneMsg) {
	text := m.stream.String()
	m.stream.Reset()
	m.setPhase("Working")
	switch {
	case msg.outcome.Outcome == "succeeded":
		m.lastStepText = text
		if strings.TrimSpace(text) != "" {
			m.print(m.md.render(text, m.width))
		}
	case strings.TrimSpace(text) != "":
		// What arrived before the attempt failed or was cancelled.
		m.print(faint.Render(strings.TrimRight(text, "\n")))
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
		if !zeroUsage(m.usage) {
			m.print(faint.Render(usageLine(m.usage)))
		}
		if line := runOutcomeLine(res, m.banner.SessionID); line != "" {
			m.print(m.styleOutcome(line))
		}
	}
	m.endOp()
}

func (m *model) styleOutcome(line string) string {
	if strings.HasPrefix(line, "Compacted ") || line == "Nothing to compact." {
		return line
	}
	return errStyle.Render(line)
}

// print queues text for the scrollback above the live area, wrapped to
// the terminal's width (the terminal would cut words apart).
func (m *model) print(text string) {
	m.outbox = append(m.outbox, ansi.Wrap(text, m.width, ""))
}

// flush hands the queued output to the terminal, one batch at a time so
// it keeps its order, and quits once everything is out and nothing runs.
func (m *model) flush() tea.Cmd {
	if m.printing {
		return nil
	}
	if len(m.outbox) > 0 {
		text := strings.Join(m.outbox, "\n")
		m.outbox, m.printing = nil, true
		return m.printCmd(text)
	}
	if m.quitting && m.op == opNone && !m.quit {
		m.quit = true
		return tea.Quit
	}
	return nil
}

func addUsage(a, b session.Usage) session.Usage {
	return session.Usage{Input: a.Input + b.Input, Output: a.Output + b.Output, CacheRead: a.CacheRead + b.CacheRead, CacheWrite: a.CacheWrite + b.CacheWrite}
}
