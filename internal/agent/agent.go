// Package agent is the durable run loop: it turns a prompt into committed
// facts, drives model steps and tool calls through the recovery planner, and
// implements abort and compaction. The session log is the only source of
// truth: every decision is taken from the reduced state, never from an
// in-memory flag alone.
package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/recovery"
	"github.com/tiny-agent/tiny-go/internal/secrets"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// Log is the durable session the agent writes through; *session.Store
// implements it. Commit must be atomic: on error nothing was applied.
type Log interface {
	Commit(ctx context.Context, facts []session.Fact) ([]session.Fact, error)
	State() *session.State
}

// Config wires an Agent.
type Config struct {
	Log          Log
	Provider     provider.Provider
	Tools        []tools.Tool
	Model        string
	SystemPrompt string
	// EnvironmentIdentity of this process (header rule of session.md §2).
	EnvironmentIdentity string
	// NewID returns a fresh UUIDv7 for ids that must be provisioned before
	// their fact exists (resultEntryId).
	NewID func() string
	// Now is the clock for durations.
	Now func() time.Time
	// Events receives what the agent reports (see Event); nil means
	// nothing is reported.
	Events func(Event)
	// AutoCompact, when non-nil, compacts before a run whose previous
	// request's prompt exceeded the configured share of the window.
	AutoCompact *AutoCompact
	// Identity is the wire adapter's identity in the configuration
	// snapshot; the zero value is OpenRouter's Chat Completions.
	Identity Identity
	// Reasoning keeps the reasoning details of assistant entries beside
	// the session; nil keeps them in memory for this agent only.
	Reasoning ReasoningLog
	// Images returns the images a user message's text names (kept beside
	// the session: the message content is a string); they go with it as
	// image parts. Nil sends none.
	Images func(text string) []provider.Image

	// BeforeEffect, when set, runs between a tool call's durable intent
	// and its effect (checkpoints); see effect.go.
	BeforeEffect BeforeEffect
	// ResultNote, when set, adds text to a tool call's result after its
	// effect ended, before the result is committed (language-server
	// diagnostics); see effect.go.
	ResultNote ResultNote
	// Scrub masks the secret values tiny-go knows in every tool result
	// before it is committed (and so before it is shown or sent); nil
	// masks nothing.
	Scrub *secrets.Scrubber

	// Approve, when non-nil, decides every tool call that is about to
	// start (not the replay of a safe call, and never the built-in read)
	// before anything about it is committed; see approve.go.
	Approve ApproveFunc

	// MaxToolCalls bounds the tool calls of one reply; 0 means
	// DefaultMaxToolCalls. A reply with more runs none of them (see
	// assistantStep).
	MaxToolCalls int
	// MaxParallel bounds the calls of one reply that run at once (tools
	// that run concurrently: subagents); 0 means DefaultMaxParallel.
	MaxParallel int

	// Hooks runs the user's hooks (internal/hooks); nil runs none. See
	// userhooks.go.
	Hooks HookRunner

	// hooks are test seams; see hooks.go.
	hooks *hooks
}

// AutoCompact configures automatic compaction.
type AutoCompact struct {
	ContextWindow int64   // tokens; 0 asks Lookup, else DefaultContextWindow
	Share         float64 // e.g. 0.85
	// Lookup, when set and ContextWindow is 0, finds the window the first
	// time it is needed (once per agent); 0 means unknown.
	Lookup func(context.Context) int64
}

// Agent runs operations on one session. Methods are safe for concurrent
// use: Abort is meant to be called from another goroutine (a key handler or
// a signal) while Run or Compact is in progress.
type Agent struct {
	cfg  Config
	conf *configuration
	sink func(Event)

	// mu serializes every commit with the abort decision, so "settlement
	// first" and "abort first" are decided at one point.
	mu     sync.Mutex
	active *activePhase // the phase in progress, nil between phases
	// abortsWaiting counts Abort calls waiting for mu; no commit goes
	// ahead of one (abortDone, on mu, wakes commits when one got through),
	// so an Esc that arrives during a commit is never overtaken by the next
	// effect.
	abortsWaiting atomic.Int32
	abortDone     *sync.Cond
	// chainGap is set (under mu) between a compaction of the chain of
	// runtime.md §4 and its continuation run, when no operation is open;
	// chainStopped is set by an Abort during the task, which then starts
	// no further operation. Both are reset by each task.
	chainGap, chainStopped bool
	// declinedContinuation is set when an Esc stopped the chain before its
	// continuation run: this process does not start it on its own again.
	declinedContinuation bool
	// hookStop, set (under mu) while hooks run outside an operation,
	// stops them: an Esc then has something to abort.
	hookStop context.CancelFunc

	events *eventQueue
	wire   wireCache // the converted active context (driving goroutine only)

	// busy is set while Run, Compact or Resume drives an operation.
	busy atomic.Bool

	// lastPromptTokens is the prompt size of the last model request, for
	// automatic compaction.
	lastPromptTokens int64
	// window is the context window once resolved (see contextWindow).
	window int64
}

// New validates the configuration and returns an Agent.
func New(cfg Config) (*Agent, error) {
	if cfg.Log == nil || cfg.Provider == nil || cfg.NewID == nil {
		return nil, errors.New("agent: Log, Provider and NewID are required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Reasoning == nil {
		cfg.Reasoning = &memoryReasoning{details: make(map[string]jsontext.Value)}
	}
	conf, err := newConfiguration(cfg.Identity, cfg.Model, cfg.SystemPrompt, cfg.EnvironmentIdentity, cfg.Tools)
	if err != nil {
		return nil, err
	}
	sink := cfg.Events
	if sink == nil {
		sink = func(Event) {}
	}
	if cfg.hooks == nil {
		cfg.hooks = &hooks{}
	}
	a := &Agent{cfg: cfg, conf: conf, sink: sink, events: newEventQueue()}
	a.abortDone = sync.NewCond(&a.mu)
	// A new process continues the automatic-compaction decision from the
	// session: the prompt size of its last assistant request.
	u := cfg.Log.State().LastAssistantUsage
	a.lastPromptTokens = u.Input + u.CacheRead + u.CacheWrite
	return a, nil
}

// Result is how an operation ended, taken from the committed terminal.
type Result struct {
	OperationID string
	Kind        session.OperationKind
	Outcome     session.Outcome
	Completion  session.Completion
	// Answer is the final assistant text of a completed run.
	Answer string
	Error  *session.ErrorInfo
	// Blocked is set when recovery cannot proceed without a human.
	Blocked string
}

// finished reports a committed terminal and builds the Result.
func (a *Agent) finished(r *run, rec *session.OperationFinished) *Result {
	res := &Result{
		OperationID: rec.OperationID,
		Kind:        rec.OperationKind,
		Outcome:     rec.Outcome,
		Completion:  rec.Completion,
		Error:       rec.Error,
	}
	if rec.Outcome == session.OutcomeCompleted && rec.OperationKind == session.OperationRun {
		res.Answer = a.answerText(rec.FinalEntryID)
	}
	out := OperationOutcome{
		Recovery: r.recovery,
		Duration: a.cfg.Now().Sub(r.start),
		Usage:    r.usage,
	}
	done := *res
	a.emit(OperationCompleted{Result: done, Outcome: out})
	return res
}

// answerText finds the content of the final assistant message: it is the
// last transcript message when the run completed normally.
func (a *Agent) answerText(finalEntryID string) string {
	st := a.cfg.Log.State()
	if n := len(st.Transcript); n > 0 && finalEntryID != "" {
		if m := st.Transcript[n-1]; m.Role == session.RoleAssistant && m.Content != nil {
			return *m.Content
		}
	}
	return ""
}

// ErrBusy is returned when another Run, Compact or Resume of this agent is
// still in progress.
var ErrBusy = errors.New("another operation of this session is still in progress")

// ErrNothingToCompact is the refusal of /compact when no user boundary
// exists.
//
//lint:ignore ST1005 the text is the exact user-facing refusal of runtime.md §4.
var ErrNothingToCompact = errors.New("Nothing to compact.")

// Run accepts prompt as a new run and drives it to its terminal (or to a
// blocked plan). The prompt is accepted once [user entry + runStarted] is
// durable; Accepted is reported to the observer at that point.
func (a *Agent) Run(ctx context.Context, prompt string) (Result, error) {
	if !a.busy.CompareAndSwap(false, true) {
		return Result{}, ErrBusy
	}
	defer a.busy.Store(false)
	if prompt == "" {
		return Result{}, errors.New("empty prompt")
	}
	a.beginTask()
	if res, err := a.settleOpen(ctx); err != nil || res != nil {
		return derefResult(res), err
	}
	if res, err := a.maybeAutoCompact(ctx); err != nil || res != nil {
		if res != nil {
			return *res, err
		}
		return Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err // stopped before the prompt was accepted
	}
	entryID := a.cfg.NewID()
	if a.cfg.Hooks != nil {
		var block string
		var err error
		stopped := a.outsideHooks(ctx, func(hctx context.Context) { block, err = a.cfg.Hooks.PromptSubmitted(hctx, entryID, prompt) })
		switch {
		case stopped: // Esc: the prompt was never accepted
			return Result{Kind: session.OperationRun, Outcome: session.OutcomeAborted}, nil
		case err != nil:
			return Result{}, fmt.Errorf("UserPromptSubmit hooks: %w", err)
		case block != "":
			return Result{}, &PromptBlockedError{Reason: block}
		}
	}
	res, err := a.accept(ctx, entryID, prompt)
	return a.stopHooks(ctx, res, err)
}

// PromptBlockedError is a prompt a UserPromptSubmit hook refused; nothing
// of it was committed.
type PromptBlockedError struct{ Reason string }

func (e *PromptBlockedError) Error() string {
	return "a UserPromptSubmit hook blocked the prompt: " + e.Reason
}

// accept commits prompt as a new run (user entry entryID) and drives it
// and the rest of its task.
func (a *Agent) accept(ctx context.Context, entryID, prompt string) (Result, error) {
	opID := a.cfg.NewID()
	facts := []session.Fact{
		{ID: entryID, Entry: &session.UserEntry{Content: prompt}},
		{Record: &session.RunStarted{OperationID: opID, InputEntryID: entryID}},
	}
	started := OperationStarted{OperationID: opID, Kind: session.OperationRun}
	if _, err := a.commit(ctx, facts, started); err != nil {
		return Result{}, fmt.Errorf("accept prompt: %w", err)
	}
	res, err := a.drive(ctx, false)
	if err != nil {
		return res, err
	}
	return a.continueTask(ctx, res)
}

// settleOpen resumes an operation that an earlier error or process left
// open, so a new prompt is never refused just because the last one broke
// off. It returns a Result only when the open operation cannot be finished
// (blocked), and then nothing new may start.
func (a *Agent) settleOpen(ctx context.Context) (*Result, error) {
	if !a.Pending() {
		return nil, nil
	}
	res, err := a.resume(ctx)
	if err != nil {
		return nil, fmt.Errorf("resume the open operation: %w", err)
	}
	if res.Blocked != "" {
		return &res, nil
	}
	return nil, nil
}

func derefResult(r *Result) Result {
	if r == nil {
		return Result{}
	}
	return *r
}

// Resume drives an open operation (after a crash) to its end using the
// recovery planner. An idle session returns a completed Result with no
// facts appended.
func (a *Agent) Resume(ctx context.Context) (Result, error) {
	if !a.busy.CompareAndSwap(false, true) {
		return Result{}, ErrBusy
	}
	defer a.busy.Store(false)
	a.beginTask()
	return a.resume(ctx)
}

// Pending reports whether Resume has work to do: an open operation, or
// the continuation run that a context_limit run and its compaction owe
// (runtime.md §4). A continuation the user stopped with Esc in this
// process is not owed again by it.
func (a *Agent) Pending() bool {
	st := a.cfg.Log.State()
	if !st.Idle() {
		return true
	}
	a.mu.Lock()
	declined := a.declinedContinuation
	a.mu.Unlock()
	return st.ContinuationOwed && !declined
}

// resume finishes the task a crash or an error left unfinished: the open
// operation through the recovery planner, then the rest of the chain.
func (a *Agent) resume(ctx context.Context) (Result, error) {
	st := a.cfg.Log.State()
	res := Result{Outcome: session.OutcomeCompleted}
	if !st.Idle() {
		op := st.Operation
		a.emit(OperationStarted{OperationID: op.OperationID, Kind: op.Kind, Recovery: true})
		var err error
		if res, err = a.drive(ctx, true); err != nil {
			return res, err
		}
	} else if !a.Pending() {
		return res, nil
	}
	return a.continueTask(ctx, res)
}

// Current returns the planner's view of this agent's configuration.
func (a *Agent) Current() recovery.Current { return a.conf.current }

// commit is the one way facts reach the session: it appends facts as one
// transaction and then delivers evs, the events those facts make true. It
// is the serialization point of the abort race (runtime.md §3): under mu
// any Abort that is already waiting goes first, and the commit is dropped
// (aborted, nothing written) when an abort became durable first. Events go
// out after mu is released, so no sink runs under the commit lock.
func (a *Agent) commit(ctx context.Context, facts []session.Fact, evs ...Event) (aborted bool, err error) {
	return a.write(ctx, abortIsDurable, facts, evs)
}

// settle commits the facts that settle an effect (a reply, a tool result,
// a failure); the BeforeSettle test seam runs just before.
func (a *Agent) settle(ctx context.Context, facts []session.Fact, evs ...Event) (aborted bool, err error) {
	a.cfg.hooks.beforeSettle()
	return a.commit(ctx, facts, evs...)
}

// reconcile commits facts that carry out a durable abort (its stepFailed,
// synthetic results, aborted terminal): never dropped.
func (a *Agent) reconcile(ctx context.Context, facts []session.Fact, evs ...Event) error {
	_, err := a.write(ctx, func(*session.Operation) bool { return false }, facts, evs)
	return err
}

// abortIsDurable is the drop rule of an ordinary commit.
func abortIsDurable(op *session.Operation) bool { return op != nil && op.AbortRequested }

// write appends facts under mu unless drop (called under mu, with the open
// operation) says an abort won, and then delivers evs.
func (a *Agent) write(ctx context.Context, drop func(*session.Operation) bool, facts []session.Fact, evs []Event) (dropped bool, err error) {
	a.mu.Lock()
	a.letAbortsGoFirst()
	if drop(a.cfg.Log.State().Operation) {
		a.mu.Unlock()
		return true, nil
	}
	if len(facts) > 0 {
		if _, err := a.cfg.Log.Commit(ctx, facts); err != nil {
			a.mu.Unlock()
			return false, err
		}
	}
	a.events.push(evs...)
	a.mu.Unlock()
	a.events.drain(a.sink)
	return false, nil
}

// emit delivers ev after everything queued before it.
func (a *Agent) emit(ev Event) {
	a.events.push(ev)
	a.events.drain(a.sink)
}

// Abort requests an abort of the open operation: it commits abortRequested
// (waiting for the append), then signals the active phase. Reconciliation
// is done by the goroutine driving the operation. Abort returns false when
// there is nothing to abort, or an abort is already durable (a second Esc is
// harmless). Between a compaction of the chain and its continuation run
// there is no open operation; an Esc there stops the chain.
func (a *Agent) Abort(ctx context.Context) (bool, error) {
	a.abortsWaiting.Add(1)
	a.mu.Lock()
	a.abortsWaiting.Add(-1)
	a.abortDone.Broadcast()
	st := a.cfg.Log.State()
	op := st.Operation
	if op == nil && a.chainGap && !a.chainStopped {
		a.chainStopped = true
		a.mu.Unlock()
		return true, nil
	}
	if op == nil && a.hookStop != nil {
		a.hookStop()
		a.hookStop = nil
		a.mu.Unlock()
		return true, nil
	}
	if op == nil || op.AbortRequested {
		a.mu.Unlock()
		return false, nil
	}
	rec := &session.AbortRequested{OperationID: op.OperationID, OperationKind: op.Kind, Reason: session.AbortReasonEscape}
	switch {
	case op.Kind == session.OperationCompaction:
		rec.Phase = session.PhaseCompact
	case a.active != nil && a.active.phase == session.PhaseTool:
		rec.Phase, rec.ToolCallID = session.PhaseTool, a.active.toolCallID
	case a.active == nil && pendingToolCall(op) != "":
		// Between phases with a started tool whose result is missing.
		rec.Phase, rec.ToolCallID = session.PhaseTool, pendingToolCall(op)
	default:
		rec.Phase = session.PhaseModel
	}
	if _, err := a.cfg.Log.Commit(ctx, []session.Fact{{Record: rec}}); err != nil {
		a.mu.Unlock()
		return false, fmt.Errorf("commit abort: %w", err)
	}
	a.chainStopped = true
	a.events.push(CancelRequested{OperationID: op.OperationID, Kind: op.Kind, Phase: rec.Phase, ToolCallID: rec.ToolCallID})
	active := a.active
	a.mu.Unlock()
	a.events.drain(a.sink)
	a.cfg.hooks.afterAbortCommitted()
	if active != nil {
		active.cancel()
	}
	return true, nil
}

func pendingToolCall(op *session.Operation) string {
	for _, t := range op.ToolCalls {
		if t.Status == session.ToolPending {
			return t.ToolCallID
		}
	}
	return ""
}
