package ui

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// OneShot shows a one-shot run. The answer goes to stdout as it streams,
// and so does the text the model writes before and between its tool
// calls (a blank line apart); the tool log and the progress go to stderr:
// a spinner with the elapsed time when stderr is a terminal, nothing
// animated when it is not. Colour is used only on a terminal and without
// NO_COLOR.
//
// Event is the agent's event sink; Finish prints what did not stream and
// stops the spinner. Other output meant for stderr while the run is in
// progress goes through Stderr, so it never lands in the spinner's line.
type OneShot struct {
	mu      sync.Mutex
	out     io.Writer
	err     io.Writer
	log     toolLog
	styles  logStyles
	cleanup bool // stdout is a terminal: strip control sequences
	spin    bool // stderr is a terminal: animate the progress
	shared  bool // stdout and stderr are the same terminal
	width   int

	midLine    bool // stdout's last byte is not a newline
	wrote      bool // text went to stdout
	gap        bool // a tool ran since the last text: blank line first
	stepText   bool // the model request in progress streamed text
	lastStream bool // the last successful request streamed text
	usage      usageMeter

	phase   string
	since   time.Time
	frame   int
	shown   bool // the spinner's line is on stderr now
	stop    chan struct{}
	stopped bool

	// Without a terminal nothing animates, but a long wait for the model
	// still shows: a line every waitEvery while a request has brought
	// nothing back yet.
	waitEvery time.Duration
	waiting   bool
	waitSince time.Time

	// asking holds the progress while a question waits for an answer on
	// the same stderr: a spinner frame would erase the question's line.
	asking bool
}

// defaultWaitEvery is how often a non-terminal stderr hears that the model
// is still being waited for.
const defaultWaitEvery = 10 * time.Second

// OneShotOptions configure NewOneShot.
type OneShotOptions struct {
	Stdout, Stderr io.Writer
	// WorkDir resolves the paths of write and edit calls, whose diffs the
	// tool log shows.
	WorkDir string
	Getenv  func(string) string // NO_COLOR, TERM; nil: none set
	// WaitEvery is the interval of "waiting for the model: 30s" lines on a
	// stderr that is not a terminal (default 10s).
	WaitEvery time.Duration
}

// NewOneShot starts the progress display; call Finish when the run ends.
func NewOneShot(o OneShotOptions) *OneShot {
	getenv := o.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	errTTY := isTTY(o.Stderr) && getenv("TERM") != "dumb"
	s := &OneShot{
		out:     o.Stdout,
		err:     o.Stderr,
		log:     toolLog{workDir: o.WorkDir},
		styles:  plainStyles(),
		cleanup: isTTY(o.Stdout),
		spin:    errTTY,
		shared:  isTTY(o.Stdout) && errTTY,
		width:   terminalWidth(o.Stderr),
		stop:    make(chan struct{}),

		waitEvery: o.WaitEvery,
	}
	if s.waitEvery <= 0 {
		s.waitEvery = defaultWaitEvery
	}
	if errTTY && getenv("NO_COLOR") == "" {
		s.styles = colorStyles()
	}
	if s.spin {
		go s.animate()
	} else {
		go s.reportWaits()
	}
	return s
}

// Event shows one agent event.
func (s *OneShot) Event(ev agent.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch ev := ev.(type) {
	case agent.OperationStarted:
		if ev.Kind == session.OperationCompaction {
			s.errLine("compacting…")
			s.setPhase("Compacting")
		} else {
			s.setPhase("Thinking")
		}
	case agent.ModelStarted:
		s.stepText = false
		s.waiting, s.waitSince = true, time.Now()
		if ev.Model.Kind != session.OperationCompaction {
			s.setPhase("Thinking")
		}
	case agent.ModelDelta:
		s.waiting = false
		s.text(ev.Text)
	case agent.ModelReasoningDelta:
		s.waiting = false
	case agent.ModelRetrying:
		s.errLine(ev.Wait.String())
	case agent.ModelCompleted:
		s.waiting = false
		s.usage.step(ev.Outcome)
		s.endLine()
		if ev.Outcome.Outcome == "succeeded" {
			s.lastStream = s.stepText
			if lines := SourceLines(ev.Outcome.Sources); lines != nil {
				s.clearSpinner()
				s.write(s.out, "\n"+strings.Join(lines, "\n")+"\n")
				s.wrote = true
			}
		}
		s.setPhase("Working")
	case agent.ToolStarted:
		s.log.started(ev.Tool)
		s.errLine(s.styles.tool.Render(toolStartLine(ev.Tool, s.width)))
		s.setPhase("Running " + sanitizeLine(ev.Tool.Display))
	case agent.ToolCompleted:
		for _, l := range s.log.report(ev.Tool, ev.Outcome).lines(s.width, s.styles) {
			s.errLine(l)
		}
		s.gap = true
		s.setPhase("Working")
	case agent.CancelRequested:
		s.setPhase("Aborting")
	case agent.OperationCompleted:
		s.usage.operation(ev.Outcome.Usage)
	}
}

// text writes streamed answer text to stdout.
func (s *OneShot) text(t string) {
	if t == "" {
		return
	}
	if s.cleanup {
		t = sanitize(t)
	}
	s.clearSpinner()
	if !s.stepText && s.wrote && s.gap {
		// Text after tool calls starts a paragraph of its own.
		s.endLine()
		s.write(s.out, "\n")
	}
	s.gap = false
	s.stepText, s.wrote = true, true
	s.write(s.out, t)
	s.midLine = !strings.HasSuffix(t, "\n")
}

// endLine ends the streamed text's last line.
func (s *OneShot) endLine() {
	if s.midLine {
		s.write(s.out, "\n")
		s.midLine = false
	}
}

// errLine writes one line to stderr.
func (s *OneShot) errLine(line string) {
	s.clearSpinner()
	if s.shared {
		s.endLine() // the same terminal: start on a line of its own
	}
	s.write(s.err, line+"\n")
}

func (s *OneShot) setPhase(p string) {
	if p != s.phase {
		s.phase, s.since = p, time.Now()
	}
}

// Finish prints the answer when its request streamed nothing, ends
// stdout's last line and stops the spinner; on stderr, when it is a
// terminal, a dim usage line follows.
func (s *OneShot) Finish(res agent.Result) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.halt()
	if res.Answer != "" && !s.lastStream {
		s.text(res.Answer)
	}
	s.endLine()
	if s.spin && !s.usage.zero() {
		s.write(s.err, s.styles.dim.Render(s.usage.line())+"\n")
	}
}

// Close stops the spinner; the run ended without a result.
func (s *OneShot) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.halt()
	s.endLine()
}

func (s *OneShot) halt() {
	if !s.stopped {
		s.stopped = true
		close(s.stop)
	}
	s.clearSpinner()
	s.phase = ""
}

// Asking holds the spinner and the waiting lines while a question is put
// on stderr (on), and lets them go on once it is answered (off).
func (s *OneShot) Asking(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clearSpinner()
	s.asking = on
}

// Stderr is stderr for other messages during the run: each write first
// takes the spinner's line away.
func (s *OneShot) Stderr() io.Writer { return stderrWriter{s} }

type stderrWriter struct{ s *OneShot }

func (w stderrWriter) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	w.s.clearSpinner()
	if w.s.shared {
		w.s.endLine()
	}
	return w.s.err.Write(p)
}

// animate redraws the spinner until Finish or Close.
func (s *OneShot) animate() {
	t := time.NewTicker(tickEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.mu.Lock()
			s.drawSpinner()
			s.mu.Unlock()
		}
	}
}

// reportWaits writes "waiting for the model: 30s" on a stderr that is not
// a terminal, every waitEvery while a model request has brought nothing
// back, so a log or CI job shows the run is alive and what it waits for.
func (s *OneShot) reportWaits() {
	t := time.NewTicker(s.waitEvery)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.mu.Lock()
			if s.waiting && !s.stopped && !s.asking {
				waited := time.Since(s.waitSince).Round(s.waitEvery)
				s.errLine("waiting for the model: " + waitText(waited))
			}
			s.mu.Unlock()
		}
	}
}

// waitText is a wait in whole seconds ("30s"), or as Go writes it when
// shorter than a second.
func waitText(d time.Duration) string {
	if d >= time.Second {
		return fmt.Sprintf("%ds", int64(d/time.Second))
	}
	return d.String()
}

// drawSpinner shows "⠋ Running bash… 3s" on stderr's last line, unless
// the answer is mid-line on the same terminal.
func (s *OneShot) drawSpinner() {
	if s.stopped || s.asking || s.phase == "" || (s.shared && s.midLine) {
		return
	}
	s.frame++
	line := fmt.Sprintf("%s %s… %ds", spinnerFrames[s.frame%len(spinnerFrames)], s.phase, int(time.Since(s.since).Seconds()))
	s.write(s.err, "\r"+truncate(line, s.width)+"\x1b[K")
	s.shown = true
}

func (s *OneShot) clearSpinner() {
	if s.shown {
		s.write(s.err, "\r\x1b[K")
		s.shown = false
	}
}

// write ignores errors: a closed stdout (a pipe whose reader left) must
// not stop the run, whose result is in the session.
func (s *OneShot) write(w io.Writer, text string) { _, _ = io.WriteString(w, text) }

// terminalWidth is w's width in cells when it is a terminal, else the
// line-mode width.
func terminalWidth(w io.Writer) int {
	if f, ok := w.(interface{ Fd() uintptr }); ok {
		if width, _, err := termSize(int(f.Fd())); err == nil && width > 0 {
			return width - 1
		}
	}
	return lineWidth
}
