package ui

import (
	"context"
	"strings"
	"sync"
	"time"

	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/attach"
	"github.com/tiny-agent/tiny-go/internal/commands"
	"github.com/tiny-agent/tiny-go/internal/interrupt"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/todo"
)

// opKind is the user-level operation in progress: one Run or Compact call
// (a Run may contain an automatic compaction and then the run).
type opKind int

const (
	opNone opKind = iota
	opRun
	opCompact
	opShell // a !command (host.go)
)

// tickEvery is the spinner's frame interval.
const tickEvery = 100 * time.Millisecond

// frameEvery is the shortest interval between two renderings of the
// streamed text.
const frameEvery = 40 * time.Millisecond

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
	search *historySearch // a Ctrl+R search in progress
	store  *History       // where submitted inputs are kept; nil: nowhere
	recap  []session.Message
	width  int
	height int
	md     markdown

	op            opKind
	opSeq         int  // agent operations started within op
	aborting      bool // the user asked to abort op
	abortInFlight bool
	phase         string
	phaseStart    time.Time
	retrying      bool       // phase is a retry wait: the reply replaces it
	retryUntil    time.Time  // when the waiting request is sent again
	retryCause    string     // why it is: "HTTP 429"
	st            *streamer  // the model step being streamed
	thinking      thinking   // its reasoning, shown dimmed while it streams
	lastRender    time.Time  // when st last rendered
	lastStepText  string     // text of the last completed model step
	usage         usageMeter // of the agent operations within op
	tickGen       int
	frame         int

	notice string // one transient line under the input

	custom    []commands.Command // custom slash commands (palette.go)
	problems  []string           // command files not loaded, shown after the banner
	host      Host               // /model, /status, !cmd … (host.go)
	menuState menu               // the command menu (palette.go)
	mentions  *attach.Index      // paths for @ completion; nil: none (mention.go)
	mention   mentionMenu
	// images stores an attached image beside the session and returns the
	// text that names it in the prompt; nil: images are not accepted.
	images func(attach.Attachment) (string, error)
	pastes []string // long pastes, by placeholder number - 1 (paste.go)
	// ctrlCAt is when Ctrl+C on an empty idle prompt asked "again to
	// exit"; zero when no such question is open.
	ctrlCAt     time.Time
	escAt       time.Time          // an idle Esc on an empty prompt: a second one rewinds (esc.go)
	cancelShell context.CancelFunc // stops the running !command

	approval *pendingApproval // the tool call waiting for the user (approve.go)
	forms    []*pendingForm   // MCP servers' forms, the first on screen (elicit_form.go)
	todos    todo.List        // the model's todo list (todo.go)
	// mode is the approval mode (Shift+Tab cycles it); planReady is set
	// while a finished plan waits for acceptance (plan.go).
	mode      *approval.Switch
	planReady bool

	rewinder Rewinder     // /rewind (rewind.go)
	rewind   *rewindState // a rewind being planned, confirmed or applied

	outbox   []string
	printing bool
	// printCmd hands text to the terminal and then reports printedMsg.
	printCmd func(string) tea.Cmd
	// termSize reads the terminal's size now (nil: unknown), so an
	// insertion is held back when the terminal was resized and Bubble Tea
	// does not know it yet.
	termSize func() (width, height int, ok bool)

	// lastView is the last view handed to Bubble Tea; while resizing it
	// stays on the screen unchanged.
	lastView *tea.View
	reflows  bool // the terminal re-wraps lines when it gets narrower
	// ready is set once the first frame is on the screen: Bubble Tea
	// inserts lines above a frame, and loses some without one.
	ready    bool
	sized    bool // a WindowSizeMsg arrived
	readyGen int  // of the last WindowSizeMsg: only its readyMsg counts
	resizing bool // a reflowMsg is being handled
	// latestSize is the newest window size the program's filter has seen.
	latestSize tea.WindowSizeMsg
	// holds counts insertions held back since the last window size: after
	// a few, the terminal's size is taken as what it is (a size read that
	// never matches must not stop all output).
	holds int

	interrupts interrupt.Policy // what Ctrl+C and signals do
	quitting   bool             // exit once op has ended and the output is flushed
	forced     bool             // a second Ctrl+C: the engine context is cancelled
	quit       bool             // tea.Quit was returned
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
	m.interrupts.Now = func() time.Time { return m.now() }
	m.st = newStreamer(&m.md, m.width-1, m.liveRoom())
	m.printCmd = m.insertAbove
	m.input.SetWidth(m.width)
	return m
}

func (m *model) Init() tea.Cmd {
	m.print(strings.Join(bannerLines(m.banner, true), "\n"))
	return tea.Batch(tea.RequestBackgroundColor, m.flush())
}

func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	return m, tea.Batch(cmd, m.flush())
}

// update hands a message to the handler for its kind; anything else
// edits the input.
func (m *model) update(msg tea.Msg) tea.Cmd {
	// Overlays first: while open they take the keys.
	if cmd, handled := m.formUpdate(msg); handled {
		return cmd
	}
	if cmd, handled := m.approvalUpdate(msg); handled {
		return cmd
	}
	if cmd, handled := m.rewindUpdate(msg); handled {
		return cmd
	}
	if cmd, handled := m.screenUpdate(msg); handled {
		return cmd
	}
	if cmd, handled := m.userUpdate(msg); handled {
		return cmd
	}
	if cmd, handled := m.modelUpdate(msg); handled {
		return cmd
	}
	if cmd, handled := m.operationUpdate(msg); handled {
		return cmd
	}
	return m.updateInput(msg)
}

// screenUpdate handles the terminal's messages and the drawing timers:
// output waits for a frame at the current size and colours.
func (m *model) screenUpdate(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case reflowMsg:
		return m.reflow(msg), true
	case readyMsg:
		// Only the newest size's frame counts; an older one's timer may
		// fire after it and must not take readiness back.
		if msg.gen == m.readyGen {
			m.ready = true
		}
		return nil, true
	case tea.WindowSizeMsg:
		return m.resize(msg), true
	case tea.BackgroundColorMsg:
		m.md.setLight(!msg.IsDark())
		return nil, true
	case tea.ColorProfileMsg:
		m.md.profile = msg.Profile
		return nil, true
	case printedMsg:
		m.printing = false
		return nil, true
	case heldPrintMsg:
		return m.hold(msg.text), true
	case tickMsg:
		if m.op == opNone || msg.gen != m.tickGen {
			return nil, true
		}
		m.frame++
		m.renderStream(false)
		return m.tick(), true
	}
	return nil, false
}

// resize lays the screen out again at the terminal's new size.
func (m *model) resize(msg tea.WindowSizeMsg) tea.Cmd {
	m.resizing, m.holds = false, 0
	m.width, m.height = max(msg.Width, 10), max(msg.Height, 4)
	m.input.SetWidth(m.width)
	m.st.setWidth(m.width - 1)
	m.st.chunk = max(m.liveRoom(), 4)
	// Output waits until a frame has been drawn at this size: Bubble
	// Tea inserts lines relative to the frame on the screen.
	m.ready = false
	if !m.sized {
		// The recap is rendered at the terminal's width.
		m.sized = true
		m.printLines(errLines(m.problems))
		m.printLines(recapLines(m.recap, m.width-1, &m.md, colorStyles(), func(s string) string { return bold.Render(s) }))
		m.printLines(todoLines(m.todos))
	}
	m.readyGen++
	gen := m.readyGen
	return tea.Tick(3*frameEvery, func(time.Time) tea.Msg { return readyMsg{gen: gen} })
}

// userUpdate handles what the user does: keys, pastes, host results and
// interrupts.
func (m *model) userUpdate(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		return m.key(msg), true
	case tea.PasteMsg:
		cmd := m.paste(msg)
		m.syncMenu()
		return cmd, true
	case hostResultMsg:
		m.hostResult(msg)
		return nil, true
	case escExpiredMsg:
		m.escExpired(msg)
		return nil, true
	case ctrlCExpiredMsg:
		if m.ctrlCAt.Equal(msg.at) {
			m.ctrlCAt = time.Time{}
			if m.notice == ctrlCAgain {
				m.notice = ""
			}
		}
		return nil, true
	case interruptMsg:
		return m.interrupt(), true
	}
	return nil, false
}

// modelUpdate handles the agent's events of a model step: the phase line
// and the streamed answer follow them.
func (m *model) modelUpdate(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case opStartedMsg:
		return m.opStarted(msg), true
	case modelStartedMsg:
		if msg.compaction {
			m.setPhase("Compacting")
		} else {
			m.setPhase("Thinking")
		}
		m.st.reset()
		return nil, true
	case reasoningMsg:
		if m.retrying {
			m.setPhase("Thinking")
		}
		m.reasoningUpdate(msg)
		return nil, true
	case deltaMsg:
		m.reasoningUpdate(msg)
		if m.st.empty() {
			m.setPhase("Writing")
		}
		m.st.write(sanitize(msg.text))
		m.renderStream(false)
		return nil, true
	case modelDoneMsg:
		m.reasoningUpdate(msg)
		m.usage.step(msg.outcome)
		m.modelDone(msg)
		return nil, true
	case retryMsg:
		m.setPhase("")
		m.retrying = true
		m.retryUntil = m.now().Add(msg.wait.Delay)
		m.retryCause = sanitizeLine(msg.wait.Cause())
		return nil, true
	}
	return nil, false
}

// operationUpdate handles the agent's events around tools and the end of
// an operation.
func (m *model) operationUpdate(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case toolStartedMsg:
		m.print(toolStyle.Render(toolStartLine(msg.info, m.width)))
		m.setPhase("Running " + sanitizeLine(msg.info.Display))
		return nil, true
	case toolDoneMsg:
		if msg.report.summary == "" {
			msg.report = buildReport(msg.info, msg.outcome, nil)
		}
		m.printLines(msg.report.lines(m.width-1, colorStyles()))
		m.todoUpdate(msg.info, msg.outcome)
		m.setPhase("Working")
		return nil, true
	case noticeMsg:
		m.printLines([]string{errStyle.Render(msg.line)})
		return nil, true
	case lineMsg:
		m.printLines([]string{faint.Render(truncate(msg.line, m.width-1))})
		return nil, true
	case cancelRequestedMsg:
		if m.op != opNone {
			m.setPhase("Aborting")
		}
		return nil, true
	case opDoneMsg:
		m.usage.operation(msg.outcome.Usage)
		return nil, true
	case runDoneMsg:
		m.runDone(msg)
		return nil, true
	case compactDoneMsg:
		m.compactDone(msg)
		return nil, true
	case abortDoneMsg:
		return m.abortDone(msg), true
	}
	return nil, false
}

// key handles a key press. Only a lone Esc aborts: arrows and other
// sequences arrive as their own keys, parsed by Bubble Tea.
func (m *model) key(k tea.KeyPressMsg) tea.Cmd {
	if m.search != nil {
		if done := m.searchKey(k); done {
			return nil
		}
	}
	if cmd, handled := m.menuKey(k); handled {
		return cmd
	}
	if cmd, handled := m.mentionKey(k); handled {
		return cmd
	}
	if cmd, handled := m.planKey(k); handled {
		return cmd
	}
	if k.String() != "ctrl+c" && m.ctrlCAt != (time.Time{}) {
		m.ctrlCAt = time.Time{}
		if m.notice == ctrlCAgain {
			m.notice = ""
		}
	}
	if k.String() != "esc" {
		m.forgetEsc()
	}
	switch k.String() {
	case "shift+tab":
		return m.cycleMode()
	case "ctrl+r":
		m.search = &historySearch{match: -1, draft: m.input.Value()}
		m.showSearch()
		return nil
	case "ctrl+c":
		if m.op == opNone {
			return m.idleInterrupt()
		}
		return m.interrupt()
	case "esc":
		if m.op == opNone {
			return m.idleEsc()
		}
		return m.abort()
	case "enter":
		if m.continuedLine() {
			return nil
		}
		return m.submit()
	case "ctrl+d":
		if m.op == opNone && m.input.Value() == "" {
			return m.exit()
		}
	case "up":
		if m.onFirstLine() {
			if s, ok := m.hist.prev(m.input.Value()); ok {
				m.input.SetValue(s)
				m.syncMenu()
				return nil
			}
		}
	case "down":
		if m.onLastLine() {
			if s, ok := m.hist.next(); ok {
				m.input.SetValue(s)
				m.syncMenu()
				return nil
			}
		}
	}
	cmd := m.updateInput(k)
	m.syncMenu()
	m.syncMentions()
	return cmd
}

// ctrlCAgain is the notice of a first Ctrl+C on an empty idle prompt.
const ctrlCAgain = "Ctrl+C again to exit"

// ctrlCWindow is how long a second Ctrl+C exits.
const ctrlCWindow = 2 * time.Second

// ctrlCExpiredMsg ends the window a Ctrl+C at time at opened.
type ctrlCExpiredMsg struct{ at time.Time }

// idleInterrupt is Ctrl+C with nothing running: it clears a draft (kept
// in the history, so Up brings it back); on an empty prompt it asks for a
// second one within ctrlCWindow to exit.
func (m *model) idleInterrupt() tea.Cmd {
	if v := m.input.Value(); strings.TrimSpace(v) != "" {
		m.hist.add(v)
		m.input.Reset()
		m.syncMenu()
		m.ctrlCAt = time.Time{}
		m.notice = "Input cleared (Up brings it back)."
		return nil
	}
	now := m.now()
	if !m.ctrlCAt.IsZero() && now.Sub(m.ctrlCAt) < ctrlCWindow {
		return m.exit()
	}
	m.ctrlCAt = now
	m.notice = ctrlCAgain
	return tea.Tick(ctrlCWindow, func(time.Time) tea.Msg { return ctrlCExpiredMsg{at: now} })
}

// continuedLine handles Enter after a backslash at the cursor: the
// backslash becomes a line break, as in a shell.
func (m *model) continuedLine() bool {
	lines := strings.Split(m.input.Value(), "\n")
	row, col := m.input.Line(), m.input.Column()
	if row >= len(lines) {
		return false
	}
	r := []rune(lines[row])
	if col < 1 || col > len(r) || r[col-1] != '\\' {
		return false
	}
	m.updateInput(tea.KeyPressMsg{Code: tea.KeyBackspace})
	m.input.InsertRune('\n')
	return true
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
	c := parseCommand(value, m.custom)
	if c.kind == cmdNone {
		return nil
	}
	if m.op != opNone {
		m.notice = "An operation is running; Esc aborts it."
		return nil
	}
	if cmd, handled := m.rewindSubmit(value); handled {
		return cmd
	}
	// Pastes and mentions are resolved before anything is echoed or
	// sent: a mention that cannot be attached leaves the input as it is.
	var notes []string
	if c.kind == cmdPrompt || c.kind == cmdCustom {
		text, n, err := m.attachMentions(m.unfoldPastes(c.text))
		if err != nil {
			m.print(errStyle.Render(sanitizeLine(err.Error())))
			return nil
		}
		c.text, notes = text, n
	}
	m.notice = ""
	m.remember(value)
	m.input.Reset()
	m.syncMenu()
	m.print(bold.Render(echoLines(strings.TrimSpace(value))))
	for _, n := range notes {
		m.print(faint.Render("  ⎿ " + sanitizeLine(n)))
	}
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
	case cmdRewind:
		return m.rewindCommand(c.text)
	case cmdHelp:
		m.printLines(helpLines(m.custom))
		return nil
	case cmdModel, cmdStatus, cmdCost, cmdClear, cmdResume, cmdShell, cmdDiag, cmdInfo:
		return m.hostCommand(c)
	}
	return m.startRun(c.text)
}
