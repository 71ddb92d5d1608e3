package headless

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/mcp"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// maxLine bounds one input line (a prompt with images is large).
const maxLine = 64 << 20

// Driver runs one headless session: it reads the input, runs the user
// messages one after another and writes what happens. Its Events,
// Approve and Ask methods are the session agent's hooks, so the session
// must be built with them before Serve.
type Driver struct {
	opt Options
	out *writer

	mu   sync.Mutex
	s    Session
	mode Mode
	// keySource is init's apiKeySource (SetAPIKeySource).
	keySource string
	running   bool
	fatal     string // a bad input line ends the process
	pending   map[string]chan *ControlResponse
	nextID    int
	// sdkServers are the SDK's in-process MCP servers, by name.
	sdkServers map[string]*mcp.Client
	// inputDone is closed when the reader stops.
	inputDone chan struct{}

	tmu  sync.Mutex
	turn *turn
	// spent is the cost of the finished turns of this process
	// (--max-budget-usd counts them all).
	spent float64
}

// work is one item of the queue the main loop works through in order: a
// user message, or a change of the session between runs (set_model,
// initialize's system prompt).
type work struct {
	user  *UserMessage
	apply func() error
}

// New returns a driver; Serve runs it.
func New(opt Options) *Driver {
	if opt.Mode == "" {
		opt.Mode = ModeDefault
	}
	d := &Driver{opt: opt, mode: opt.Mode, pending: map[string]chan *ControlResponse{}, sdkServers: map[string]*mcp.Client{}, inputDone: make(chan struct{})}
	// Whoever read the output is gone: nothing can see the rest of the
	// turn, so it is aborted durably rather than run blind.
	d.out = &writer{w: opt.Out, gone: func() { go d.abortRun(context.Background()) }}
	return d
}

// Serve runs the session until the input ends (or, without stream input,
// the one prompt is answered). It returns the process's exit code: 0 when
// the last turn succeeded, 1 when it failed or an input line was bad.
func (d *Driver) Serve(ctx context.Context, s Session) int {
	d.mu.Lock()
	d.s = s
	d.mu.Unlock()
	if d.opt.OutputGone != nil {
		go func() {
			<-d.opt.OutputGone
			d.out.markBroken()
		}()
	}
	if !d.opt.StreamInput {
		close(d.inputDone)
		if code := d.recover(ctx); code != 0 {
			return code
		}
		return d.runTurn(ctx, &UserMessage{Text: d.opt.Prompt})
	}
	queue := make(chan work, 1024)
	go d.read(ctx, queue)
	defer d.closeSDKServers()
	if code := d.recover(ctx); code != 0 {
		return code
	}
	last := 0 // the exit code of the last turn
	for w := range queue {
		if d.fatalLine() != "" {
			break
		}
		if w.apply != nil {
			if err := w.apply(); err != nil {
				fmt.Fprintf(d.opt.Log, "tiny-go: %v\n", err)
			}
			continue
		}
		last = d.runTurn(ctx, w.user)
		if d.out.isBroken() {
			break // whoever read the output is gone: the run was aborted
		}
	}
	if d.out.isBroken() {
		fmt.Fprintln(d.opt.Log, "tiny-go: the output was closed; the turn was aborted and the session keeps it (resume with --resume "+s.ID()+")")
		return 1
	}
	if msg := d.fatalLine(); msg != "" {
		d.writeResult(resultMessage{Subtype: resultExecution, IsError: true, Errors: []string{msg}})
		return 1
	}
	// As Claude Code's: each turn's outcome is in its result, and the
	// exit code is the last turn's (1 when it failed).
	return last
}

// Refuse reports a run that cannot start (say, the session to resume does
// not exist) as the one error result the SDK raises, and returns the exit
// code, 1.
//
// With stream input the SDK's first line is its initialize, which it
// waits to have answered before anything else: it is answered with the
// error (the SDK raises it), so tiny-go does not exit under the SDK's
// write.
func (d *Driver) Refuse(msg string) int {
	if d.opt.StreamInput {
		br := bufio.NewReaderSize(d.opt.In, 64<<10)
		if line, _ := readLine(br); len(line) > 0 {
			if l, err := ParseLine(line); err == nil && l.Kind == KindControlRequest && l.Request.Subtype == "initialize" {
				d.out.json(outResponse{Type: controlResponse, Response: responseBody{Subtype: "error", RequestID: l.Request.ID, Error: msg}})
			}
		}
	}
	d.writeResult(resultMessage{Subtype: resultExecution, IsError: true, Errors: []string{msg}})
	return 1
}

// recover finishes an operation a crash left open, before any message
// runs. It is reported in no message (Claude Code has no such step), but
// the SDK can interrupt it and is asked about its calls as about a turn's.
func (d *Driver) recover(ctx context.Context) int {
	d.mu.Lock()
	d.running = true
	d.mu.Unlock()
	err := d.s.Recover(ctx)
	d.mu.Lock()
	d.running = false
	d.mu.Unlock()
	if err != nil {
		d.writeResult(resultMessage{Subtype: resultExecution, IsError: true, Errors: []string{err.Error()}})
		return 1
	}
	return 0
}

// read parses the input line by line: control requests and responses are
// handled at once (an interrupt must reach a running turn), the rest is
// queued in order.
func (d *Driver) read(ctx context.Context, queue chan<- work) {
	defer close(queue)
	defer close(d.inputDone)
	br := bufio.NewReaderSize(d.opt.In, 64<<10)
	for n := 1; ; n++ {
		line, err := readLine(br)
		if len(strings.TrimSpace(string(line))) > 0 {
			l, perr := ParseLine(line)
			if perr != nil {
				d.endInput(ctx, fmt.Sprintf("input line %d: %v; nothing of it was run", n, perr))
				return
			}
			d.dispatch(ctx, l, queue)
		}
		if err != nil {
			msg := ""
			if !errors.Is(err, io.EOF) {
				msg = fmt.Sprintf("reading input line %d: %v", n, err)
			}
			d.endInput(ctx, msg)
			return
		}
	}
}

// readLine reads one line of at most maxLine bytes.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxLine {
			return nil, fmt.Errorf("a line is longer than %d MB", maxLine>>20)
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

func (d *Driver) dispatch(ctx context.Context, l Line, queue chan<- work) {
	switch l.Kind {
	case KindUser:
		queue <- work{user: l.User}
	case KindControlRequest:
		d.control(ctx, l.Request, queue)
	case KindControlResponse:
		d.mu.Lock()
		ch := d.pending[l.Response.ID]
		delete(d.pending, l.Response.ID)
		d.mu.Unlock()
		if ch != nil {
			ch <- l.Response
		}
	}
}

// endInput records why the input ended. A bad line aborts the running
// turn durably, as Esc would. The plain end of input only means no more
// prompts, as with Claude Code: the Python SDK writes a string prompt and
// closes stdin at once, so every message received runs, then tiny-go
// exits. Only an interrupt or a signal aborts a turn.
func (d *Driver) endInput(ctx context.Context, fatal string) {
	d.mu.Lock()
	if fatal != "" {
		d.fatal = fatal
	}
	abort := d.running && fatal != ""
	d.mu.Unlock()
	if abort {
		d.abortRun(ctx)
	}
}

func (d *Driver) fatalLine() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.fatal
}

// abortRun aborts the running operation durably (the same as Esc).
func (d *Driver) abortRun(ctx context.Context) {
	d.mu.Lock()
	s, running := d.s, d.running
	d.mu.Unlock()
	if !running || s == nil {
		return
	}
	if _, err := s.Agent().Abort(context.WithoutCancel(ctx)); err != nil {
		fmt.Fprintf(d.opt.Log, "tiny-go: abort: %v\n", err)
	}
}

// runTurn runs one user message and writes its messages and result.
func (d *Driver) runTurn(ctx context.Context, u *UserMessage) int {
	began := time.Now()
	prompt, err := d.prompt(u)
	if err != nil {
		d.writeResult(resultMessage{Subtype: resultExecution, IsError: true, Errors: []string{err.Error()}, DurationMS: time.Since(began).Milliseconds()})
		return 1
	}
	t := &turn{mark: len(d.s.State().Transcript), tools: map[string]toolUse{}, ok: map[string]bool{}}
	d.tmu.Lock()
	d.turn = t
	d.tmu.Unlock()
	d.writeInit()
	d.mu.Lock()
	d.running = true
	d.mu.Unlock()
	res, err := d.s.Run(ctx, prompt)
	d.mu.Lock()
	d.running = false
	d.mu.Unlock()
	d.tmu.Lock()
	d.flush(t)
	d.turn = nil
	d.spent += t.cost
	d.tmu.Unlock()
	msg := d.result(t, res, err)
	msg.DurationMS = time.Since(began).Milliseconds()
	if d.fatalLine() != "" {
		return 1 // the one error result of the bad line follows
	}
	d.writeResult(msg)
	if msg.IsError {
		return 1
	}
	return 0
}

// prompt is the text a user message runs: its text blocks, and its images
// kept beside the sessions and named in the text.
func (d *Driver) prompt(u *UserMessage) (string, error) {
	text := u.Text
	for i, img := range u.Images {
		ref, err := d.s.StoreImage(img.MediaType, img.Data, fmt.Sprintf("image %d of the message", i+1))
		if err != nil {
			return "", fmt.Errorf("image %d: %w", i+1, err)
		}
		text = strings.TrimSpace(text + "\n" + ref)
	}
	if strings.TrimSpace(text) == "" {
		return "", errors.New("the user message is empty")
	}
	return text, nil
}

// result is the result message of a finished run.
func (d *Driver) result(t *turn, res agent.Result, err error) resultMessage {
	m := resultMessage{NumTurns: t.turns, TotalCostUSD: t.cost, DurationAPIMS: t.api.Milliseconds(), Usage: usageOf(t.total), PermissionDenials: t.denials}
	if t.turns > 0 {
		m.ModelUsage = map[string]any{d.s.Model(): d.modelUsage(t)}
	}
	switch {
	case err != nil && errors.Is(err, context.Canceled):
		m.Subtype, m.Errors = resultExecution, []string{"stopped before the run finished; resume with --resume " + d.s.ID()}
	case err != nil:
		m.Subtype, m.Errors = resultExecution, []string{err.Error()}
	case res.Blocked != "":
		m.Subtype, m.Errors = resultExecution, []string{"the session is blocked (" + res.Blocked + "); see tiny-go session state " + d.s.ID()}
	case res.Outcome == session.OutcomeCompleted:
		m.Subtype, m.Result = resultSuccess, res.Answer
		m.StopReason = strPtr("end_turn")
		if res.Completion == session.CompletionTruncated {
			m.StopReason = strPtr("max_tokens")
		}
	case res.Outcome == session.OutcomeAborted && t.budgetHit:
		m.Subtype, m.Errors = resultBudget, []string{fmt.Sprintf("Reached the maximum budget ($%g).", d.opt.MaxBudgetUSD)}
	case res.Outcome == session.OutcomeAborted && t.maxTurnsHit:
		m.Subtype, m.Errors = resultMaxTurns, []string{fmt.Sprintf("Reached the maximum number of turns (%d).", d.opt.MaxTurns)}
		// Claude Code counts the turn it refused to take: max-turns + 1.
		m.NumTurns = t.turns + 1
	case res.Outcome == session.OutcomeAborted:
		m.Subtype, m.Errors = resultExecution, []string{"The run was interrupted; the session keeps what it did (resume with --resume " + d.s.ID() + ")."}
	case res.Error != nil:
		m.Subtype, m.Errors = resultExecution, []string{res.Error.Message}
	default:
		m.Subtype, m.Errors = resultExecution, []string{"the run failed"}
	}
	m.IsError = m.Subtype != resultSuccess
	return m
}

// writeResult completes m and writes it in the output format: the whole
// stream gets it as one more line, json gets it alone, text gets the
// answer (and an error on stderr).
func (d *Driver) writeResult(m resultMessage) {
	m.Type, m.UUID = "result", newUUID()
	if d.s != nil {
		m.SessionID = d.s.ID()
	}
	if m.ModelUsage == nil {
		m.ModelUsage = map[string]any{}
	}
	if m.PermissionDenials == nil {
		m.PermissionDenials = []permissionDenial{}
	}
	if m.Usage.ServerToolUse == nil {
		m.Usage = usageOf(session.Usage{})
	}
	switch d.opt.Output {
	case FormatText:
		if m.IsError {
			fmt.Fprintf(d.opt.Log, "tiny-go: %s\n", strings.Join(m.Errors, "; "))
			return
		}
		d.out.text(m.Result + "\n")
	default:
		d.out.json(m)
	}
}

// emit writes a stream message (stream-json only).
func (d *Driver) emit(v any) {
	if d.opt.Output == FormatStreamJSON {
		d.out.json(v)
	}
}

// writer serializes writes of whole lines; gone runs once, on the first
// failed write.
type writer struct {
	mu     sync.Mutex
	w      io.Writer
	broken bool
	gone   func()
}

func (w *writer) isBroken() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.broken
}

func (w *writer) json(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	w.text(string(b) + "\n")
}

func (w *writer) text(s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken {
		return
	}
	if _, err := io.WriteString(w.w, s); err != nil {
		w.breakLocked()
	}
}

func (w *writer) markBroken() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.breakLocked()
}

func (w *writer) breakLocked() {
	if w.broken {
		return
	}
	w.broken = true
	if w.gone != nil {
		w.gone()
	}
}
