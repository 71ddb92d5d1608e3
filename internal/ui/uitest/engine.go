// Package uitest provides a scripted Engine for exercising the interactive
// UI without a model: it streams text slowly, runs a long fake tool, and
// aborts the way the agent does (abort durable first, then the active
// phase is cancelled, then the operation ends aborted).
package uitest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// Engine is a fake agent. The prompt picks the script:
//   - containing "tool": a reply with a bash call that takes ToolTime,
//     then the answer;
//   - containing "fail": the model request fails;
//   - containing "long": a long answer (LongWords words);
//   - "reply <shape> <n> <fast|slow>": Reply(shape, n), streamed in
//     64-byte pieces 2 ms apart (fast) or 16-byte pieces over about three
//     seconds (slow);
//   - exactly "panic now": Run panics (to test that the terminal is
//     restored);
//   - anything else: a short markdown answer quoting the prompt.
//
// Text is streamed one word every Delay.
type Engine struct {
	// Events receives what a real agent would report; nil drops it.
	Events    func(agent.Event)
	Delay     time.Duration
	ToolTime  time.Duration
	LongWords int

	mu      sync.Mutex
	active  context.CancelFunc // of the operation in progress
	opID    string
	kind    session.OperationKind
	aborted bool // abort requested for the operation in progress
	runs    int
	aborts  int // successful Abort calls
	calls   int // all Abort calls
	prompts []string
}

// Aborts returns how many Abort calls aborted something, and how many
// were made in all.
func (e *Engine) Aborts() (aborted, calls int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.aborts, e.calls
}

// Prompts returns the prompts Run received.
func (e *Engine) Prompts() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.prompts...)
}

func (e *Engine) emit(ev agent.Event) {
	if e.Events != nil {
		e.Events(ev)
	}
}

// begin opens an operation; its context is cancelled by Abort.
func (e *Engine) begin(ctx context.Context, kind session.OperationKind) (context.Context, string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.active != nil {
		return nil, "", agent.ErrBusy
	}
	e.runs++
	opCtx, cancel := context.WithCancel(ctx)
	e.active, e.opID, e.kind, e.aborted = cancel, fmt.Sprintf("op-%d", e.runs), kind, false
	return opCtx, e.opID, nil
}

func (e *Engine) end() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.active != nil {
		e.active()
	}
	e.active = nil
}

func (e *Engine) abortRequested() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.aborted
}

// Abort aborts the operation in progress, once.
func (e *Engine) Abort(context.Context) (bool, error) {
	e.mu.Lock()
	e.calls++
	if e.active == nil || e.aborted {
		e.mu.Unlock()
		return false, nil
	}
	e.aborted = true
	e.aborts++
	cancel, opID, kind := e.active, e.opID, e.kind
	e.mu.Unlock()
	e.emit(agent.CancelRequested{OperationID: opID, Kind: kind, Phase: session.PhaseModel})
	cancel()
	return true, nil
}

// Run plays the script chosen by prompt.
func (e *Engine) Run(ctx context.Context, prompt string) (agent.Result, error) {
	if prompt == "panic now" {
		panic("uitest: the fake engine panicked as asked")
	}
	opCtx, opID, err := e.begin(ctx, session.OperationRun)
	if err != nil {
		return agent.Result{}, err
	}
	defer e.end()
	e.mu.Lock()
	e.prompts = append(e.prompts, prompt)
	e.mu.Unlock()
	e.emit(agent.OperationStarted{OperationID: opID, Kind: session.OperationRun})
	started := time.Now()
	var usage session.Usage

	finish := func(res agent.Result) (agent.Result, error) {
		res.OperationID, res.Kind = opID, session.OperationRun
		e.emit(agent.OperationCompleted{Result: res, Outcome: agent.OperationOutcome{Duration: time.Since(started), Usage: usage}})
		return res, nil
	}
	aborted := func() (agent.Result, error) {
		return finish(agent.Result{Outcome: session.OutcomeAborted})
	}
	step := func(text string) bool {
		u := session.Usage{Input: 120, Output: int64(len(strings.Fields(text))), CacheRead: 900, CacheWrite: 30}
		ok := e.stream(opCtx, text)
		if !ok {
			e.emit(agent.ModelCompleted{Model: agent.ModelInfo{OperationID: opID}, Outcome: agent.ModelOutcome{Outcome: "cancelled"}})
			return false
		}
		usage = session.Usage{Input: usage.Input + u.Input, Output: usage.Output + u.Output, CacheRead: usage.CacheRead + u.CacheRead, CacheWrite: usage.CacheWrite + u.CacheWrite}
		e.emit(agent.ModelCompleted{Model: agent.ModelInfo{OperationID: opID}, Outcome: agent.ModelOutcome{Outcome: "succeeded", Usage: &u}})
		return true
	}

	if shape, n, speed, ok := parseReply(prompt); ok {
		text, u, ok := e.streamReply(opCtx, opID, shape, n, speed)
		if !ok {
			return aborted()
		}
		usage = u
		return finish(agent.Result{Outcome: session.OutcomeCompleted, Completion: session.CompletionNormal, Answer: text})
	}

	switch {
	case strings.Contains(prompt, "fail"):
		e.emit(agent.ModelStarted{Model: agent.ModelInfo{OperationID: opID}})
		if !sleep(opCtx, 5*e.delay()) {
			e.emit(agent.ModelCompleted{Model: agent.ModelInfo{OperationID: opID}, Outcome: agent.ModelOutcome{Outcome: "cancelled"}})
			return aborted()
		}
		e.emit(agent.ModelCompleted{Model: agent.ModelInfo{OperationID: opID}, Outcome: agent.ModelOutcome{Outcome: "failed", ErrorType: "http_error"}})
		return finish(agent.Result{Outcome: session.OutcomeFailed, Error: &session.ErrorInfo{Code: session.CodeModelError, Message: "provider returned HTTP 500"}})
	case strings.Contains(prompt, "tool"):
		if !step("Let me look.") {
			return aborted()
		}
		info := agent.ToolInfo{OperationID: opID, ToolCallID: "call_1", Tool: "bash", Display: "bash", Arguments: `{"command":"sleep 30 && ls -la"}`}
		e.emit(agent.ToolAdmitted{Tool: info})
		e.emit(agent.ToolStarted{Tool: info})
		if !sleep(opCtx, e.ToolTime) {
			e.emit(agent.ToolCompleted{Tool: info, Outcome: agent.ToolOutcome{Outcome: "cancelled", Content: "interrupted"}})
			return aborted()
		}
		e.emit(agent.ToolCompleted{Tool: info, Outcome: agent.ToolOutcome{Outcome: "succeeded", Content: "total 0\n"}})
	}
	answer := "You said: " + prompt + "\n\n- first point\n- second point"
	if strings.Contains(prompt, "long") {
		answer = longText(e.LongWords)
	}
	if !step(answer) {
		return aborted()
	}
	return finish(agent.Result{Outcome: session.OutcomeCompleted, Completion: session.CompletionNormal, Answer: answer})
}

// streamReply streams the reply a "reply" prompt asks for, in chunks at
// the speed asked for; ok is false when it was aborted.
func (e *Engine) streamReply(ctx context.Context, opID, shape string, n int, speed string) (text string, u session.Usage, ok bool) {
	text = Reply(shape, n)
	size, delay := 64, 2*time.Millisecond
	if speed == "slow" {
		size = 16
		delay = 3 * time.Second / time.Duration(len(text)/size+1)
	}
	e.emit(agent.ModelStarted{Model: agent.ModelInfo{OperationID: opID}})
	for rest := text; rest != ""; {
		k := min(size, len(rest))
		for k < len(rest) && !utf8.RuneStart(rest[k]) {
			k++
		}
		if e.abortRequested() || !sleep(ctx, delay) {
			e.emit(agent.ModelCompleted{Model: agent.ModelInfo{OperationID: opID}, Outcome: agent.ModelOutcome{Outcome: "cancelled"}})
			return "", session.Usage{}, false
		}
		e.emit(agent.ModelDelta{Text: rest[:k]})
		rest = rest[k:]
	}
	u = session.Usage{Input: 12300, Output: 850, CacheRead: 61000}
	e.emit(agent.ModelCompleted{Model: agent.ModelInfo{OperationID: opID}, Outcome: agent.ModelOutcome{Outcome: "succeeded", Usage: &u}})
	return text, u, true
}

// Compact pretends to summarize; it refuses before the first run.
func (e *Engine) Compact(ctx context.Context) (agent.Result, agent.CompactStats, error) {
	e.mu.Lock()
	none := e.runs == 0
	e.mu.Unlock()
	if none {
		return agent.Result{}, agent.CompactStats{}, agent.ErrNothingToCompact
	}
	opCtx, opID, err := e.begin(ctx, session.OperationCompaction)
	if err != nil {
		return agent.Result{}, agent.CompactStats{}, err
	}
	defer e.end()
	e.emit(agent.OperationStarted{OperationID: opID, Kind: session.OperationCompaction})
	res := agent.Result{OperationID: opID, Kind: session.OperationCompaction, Outcome: session.OutcomeCompleted}
	if !sleep(opCtx, 10*e.delay()) {
		res.Outcome = session.OutcomeAborted
	}
	e.emit(agent.OperationCompleted{Result: res, Outcome: agent.OperationOutcome{}})
	return res, agent.CompactStats{Compacted: 4, Kept: 6}, nil
}

// stream reports a model step that streams text word by word; false when
// it was cancelled.
func (e *Engine) stream(ctx context.Context, text string) bool {
	e.emit(agent.ModelStarted{Model: agent.ModelInfo{}})
	if !sleep(ctx, 3*e.delay()) {
		return false
	}
	words := strings.SplitAfter(text, " ")
	for _, w := range words {
		if e.abortRequested() || !sleep(ctx, e.delay()) {
			return false
		}
		e.emit(agent.ModelDelta{Text: w})
	}
	return true
}

func (e *Engine) delay() time.Duration {
	if e.Delay <= 0 {
		return time.Millisecond
	}
	return e.Delay
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// parseReply reads "reply <shape> <n> <speed>".
func parseReply(prompt string) (shape string, n int, speed string, ok bool) {
	f := strings.Fields(prompt)
	if len(f) != 4 || f[0] != "reply" {
		return "", 0, "", false
	}
	if _, err := fmt.Sscan(f[2], &n); err != nil || n <= 0 {
		return "", 0, "", false
	}
	return f[1], n, f[3], true
}

func longText(words int) string {
	if words <= 0 {
		words = 200
	}
	var b strings.Builder
	for i := range words {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "word%d", i+1)
		if (i+1)%25 == 0 {
			b.WriteString("\n\n")
		}
	}
	return b.String()
}
