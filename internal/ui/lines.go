package ui

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/tiny-agent/tiny-go/internal/interrupt"
)

// RunLines is interactive mode without a terminal: every line of In is one
// input (a prompt or a command), streamed text and tool lines are printed
// plainly to Out, and EOF exits. A signal (SIGINT, SIGTERM, SIGHUP) aborts
// the active operation and exits once it has ended; a second one cancels
// it outright. Like Run, it prints the resume hint before returning.
func RunLines(ctx context.Context, opts Options) error {
	if opts.Engine == nil {
		return errors.New("ui: Options.Engine is required")
	}
	err := runLines(ctx, opts)
	finish(opts)
	return err
}

func runLines(ctx context.Context, opts Options) error {
	pr := &linePrinter{w: opts.out(), started: make(chan struct{}, 1), approvals: make(chan approvalMsg, 1)}
	detach := opts.Observer.attach(pr.handle)
	defer detach()

	sigs, stopSignals := interrupt.Notify()
	defer stopSignals()

	r := &lineRunner{opts: opts, pr: pr, sigs: sigs}
	defer r.calls.Wait()
	pr.println(strings.Join(bannerLines(opts.Banner, false), "\n"))
	if recap := recapLines(opts.Recap, lineWidth, nil, plainStyles(), func(s string) string { return s }); len(recap) > 0 {
		pr.println(strings.Join(recap, "\n"))
	}
	if l := todoLines(opts.Todos); len(l) > 0 {
		pr.println(strings.Join(l, "\n"))
	}

	readCtx, stopReading := context.WithCancel(ctx)
	defer stopReading()
	inputs := readLines(readCtx, opts.in())
	r.inputs = inputs
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-sigs:
			return nil
		case in, ok := <-inputs:
			switch {
			case !ok:
				return nil // EOF
			case in.err != nil:
				return fmt.Errorf("read input: %w", in.err)
			}
			if r.submit(ctx, in.text) {
				return pr.err()
			}
			if err := pr.err(); err != nil {
				return err
			}
		}
	}
}

type input struct {
	text string
	err  error
}

// readLines delivers the lines of r (without their line ending) until EOF,
// a read error, or ctx ends.
func readLines(ctx context.Context, r io.Reader) <-chan input {
	ch := make(chan input)
	go func() {
		defer close(ch)
		br := bufio.NewReader(r)
		for {
			line, err := br.ReadString('\n')
			if line != "" {
				line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
				select {
				case ch <- input{text: line}:
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				if !errors.Is(err, io.EOF) {
					select {
					case ch <- input{err: err}:
					case <-ctx.Done():
					}
				}
				return
			}
		}
	}()
	return ch
}

// lineRunner executes the inputs of line mode one at a time.
type lineRunner struct {
	opts   Options
	pr     *linePrinter
	sigs   <-chan os.Signal
	policy interrupt.Policy
	calls  sync.WaitGroup // abort calls in flight
	// inputs are the lines of In; while an operation runs they answer
	// approval questions (approve_line.go).
	inputs <-chan input
	// pendingRewind waits for the y that confirms it; choosingRewind for
	// a turn number after /rewind listed them (rewind.go).
	pendingRewind  *RewindPlan
	choosingRewind bool
}

// submit runs one input and reports whether to exit.
func (r *lineRunner) submit(ctx context.Context, line string) (exit bool) {
	if r.confirmRewind(ctx, line) {
		return false
	}
	c := parseCommand(line, r.opts.Commands)
	if c.kind != cmdNone && r.opts.History != nil {
		if err := r.opts.History.Append(line); err != nil {
			r.pr.println(sanitizeLine(err.Error()))
		}
	}
	switch c.kind {
	case cmdNone:
		return false
	case cmdExit:
		return true
	case cmdInvalid:
		r.pr.println(c.text)
		return false
	case cmdRewind:
		r.rewindLine(ctx, c.text)
		return false
	case cmdHelp:
		r.pr.println(strings.Join(helpLines(r.opts.Commands), "\n"))
		return false
	case cmdModel, cmdStatus, cmdCost, cmdClear, cmdResume, cmdShell, cmdDiag, cmdInfo:
		r.hostLine(ctx, c)
		return false
	case cmdCompact:
		return r.operate(ctx, func(ctx context.Context) []string {
			res, st, err := r.opts.Engine.Compact(ctx)
			return []string{compactOutcomeLine(res, st, err, r.opts.Banner.SessionID)}
		})
	case cmdSkill:
		if r.opts.ExpandSkill == nil {
			r.pr.println("Skills are not available.")
			return false
		}
		text, err := r.opts.ExpandSkill(c.text)
		if err != nil {
			r.pr.println(sanitizeLine(err.Error()))
			return false
		}
		return r.run(ctx, text)
	}
	text, notes, err := attachMentions(r.opts.Mentions, r.opts.StoreImage, c.text)
	if err != nil {
		r.pr.println(sanitizeLine(err.Error()))
		return false
	}
	for _, n := range notes {
		r.pr.println("  ⎿ " + sanitizeLine(n))
	}
	return r.run(ctx, text)
}

func (r *lineRunner) run(ctx context.Context, prompt string) bool {
	r.pr.beginOp()
	return r.operate(ctx, func(ctx context.Context) []string {
		res, err := r.opts.Engine.Run(ctx, prompt)
		if err != nil {
			return []string{errorLine(err)}
		}
		var lines []string
		if answer := r.pr.unstreamedAnswer(res.Answer); answer != "" {
			lines = append(lines, answer)
		}
		if u := r.pr.opUsage(); !u.zero() {
			lines = append(lines, u.line())
		}
		if l := runOutcomeLine(res, r.opts.Banner.SessionID); l != "" {
			lines = append(lines, l)
		}
		return lines
	})
}

// operate runs op and prints the lines it returns. A signal (or EOF)
// meanwhile is an interrupt: by the interrupt policy it aborts op (again
// for every agent operation that starts afterwards, such as a run after an
// automatic compaction) and makes operate report exit, or later cancels
// op's context.
func (r *lineRunner) operate(ctx context.Context, op func(context.Context) []string) (exit bool) {
	opCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	drainStarted(r.pr.started)
	drainApprovals(r.pr.approvals)
	done := make(chan []string, 1)
	go func() { done <- op(opCtx) }()
	var asked *approvalMsg // the question waiting for a line
	for {
		select {
		case msg := <-r.pr.approvals:
			asked = &msg
		case in, ok := <-r.answers(asked):
			if !ok {
				r.interrupt(opCtx, cancel) // EOF: like a signal, abort and exit
				r.inputs, asked = nil, nil
				continue
			}
			if r.answerLine(opCtx, asked, in, ok) {
				asked = nil
			}
		case lines := <-done:
			r.pr.endLine()
			for _, l := range lines {
				r.pr.println(l)
			}
			return r.policy.Aborting()
		case <-r.sigs:
			r.interrupt(opCtx, cancel)
		case <-r.pr.started:
			if r.policy.Aborting() {
				r.abort(opCtx)
			}
		}
	}
}

// interrupt applies the interrupt policy to the operation in progress.
func (r *lineRunner) interrupt(ctx context.Context, cancel context.CancelFunc) {
	switch r.policy.Interrupt(true) {
	case interrupt.Abort:
		r.abort(ctx)
	case interrupt.Hold:
		r.pr.println(interrupt.HoldHint)
	default:
		cancel()
	}
}

func (r *lineRunner) abort(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	r.calls.Add(1)
	go func() {
		defer r.calls.Done()
		if _, err := r.opts.Engine.Abort(ctx); err != nil {
			r.pr.println("Abort failed: " + sanitizeLine(err.Error()))
		}
	}()
}

func drainStarted(ch chan struct{}) {
	select {
	case <-ch:
	default:
	}
}

// linePrinter writes observer events as plain text. Events come from the
// engine's goroutine, results from the runner's: mu orders them.
type linePrinter struct {
	mu       sync.Mutex
	w        io.Writer
	werr     error
	midLine  bool            // streamed text not yet ended by a newline
	step     strings.Builder // text of the model step being streamed
	lastStep string          // text of the last completed model step
	usage    usageMeter      // of the agent operations of this input
	started  chan struct{}   // an agent operation started
	// approvals are the questions the agent asks (approve_line.go).
	approvals chan approvalMsg
}

func (p *linePrinter) handle(msg any) {
	switch msg := msg.(type) {
	case opStartedMsg:
		select {
		case p.started <- struct{}{}:
		default:
		}
	case modelStartedMsg:
		p.mu.Lock()
		p.step.Reset()
		p.mu.Unlock()
	case deltaMsg:
		text := sanitize(msg.text)
		p.mu.Lock()
		p.step.WriteString(text)
		p.write(text)
		p.midLine = !strings.HasSuffix(text, "\n")
		p.mu.Unlock()
	case modelDoneMsg:
		p.mu.Lock()
		p.usage.step(msg.outcome)
		p.endLineLocked()
		if msg.outcome.Outcome == "succeeded" {
			p.lastStep = p.step.String()
		}
		p.step.Reset()
		p.mu.Unlock()
		if lines := SourceLines(msg.outcome.Sources); lines != nil {
			p.println(strings.Join(lines, "\n"))
		}
	case lineMsg:
		p.println(msg.line)
	case toolStartedMsg:
		p.println(toolStartLine(msg.info, 0))
	case toolDoneMsg:
		if msg.report.summary == "" {
			msg.report = buildReport(msg.info, msg.outcome, nil)
		}
		p.println(strings.Join(msg.report.lines(0, plainStyles()), "\n"))
	case noticeMsg:
		p.println(msg.line)
	case retryMsg:
		p.println(msg.wait.String())
	case approvalMsg:
		p.printQuestion(msg)
	case formMsg:
		close(msg.reply) // asked as a yes/no question (Observer.AskForm)
	case opDoneMsg:
		p.mu.Lock()
		p.usage.operation(msg.outcome.Usage)
		p.mu.Unlock()
	}
}

func (p *linePrinter) beginOp() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.step.Reset()
	p.lastStep = ""
	p.usage.reset()
}

// unstreamedAnswer is the final answer when its step streamed nothing.
func (p *linePrinter) unstreamedAnswer(answer string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if strings.TrimSpace(p.lastStep) != "" {
		return ""
	}
	return strings.TrimRight(sanitize(answer), "\n")
}

func (p *linePrinter) opUsage() usageMeter {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.usage
}

func (p *linePrinter) println(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endLineLocked()
	p.write(s + "\n")
}

func (p *linePrinter) endLine() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endLineLocked()
}

func (p *linePrinter) endLineLocked() {
	if p.midLine {
		p.write("\n")
		p.midLine = false
	}
}

func (p *linePrinter) write(s string) {
	if p.werr != nil {
		return
	}
	if _, err := io.WriteString(p.w, s); err != nil {
		p.werr = fmt.Errorf("write output: %w", err)
	}
}

func (p *linePrinter) err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.werr
}
