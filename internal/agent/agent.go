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

	// BeforeEffect, when set, runs between a tool call's durable intent
	// and its effect (checkpoints); see effect.go.
	BeforeEffect BeforeEffect
	// Scrub masks the secret values tiny-go knows in every tool result
	// before it is committed (and so before it is shown or sent); nil
	// masks nothing.
	Scrub *secrets.Scrubber

	// Approve, when non-nil, decides every tool call that is about to
	// start (not the replay of a safe call, and never the built-in read)
	// before anything about it is committed; see approve.go.
	Approve ApproveFunc

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
	// abortsWaiting counts Abort calls waiting for mu; a new phase does not
	// start while one waits, so an Esc that arrives during a commit is
	// never overtaken by the next effect.
	abortsWaiting atomic.Int32

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

// activePhase is the effect currently running, with the means to stop it.
type activePhase struct {
	phase      session.Phase
	toolCallID string
	cancel     context.CancelFunc
}

// New validates the configuration and returns an Agent.
func New(cfg Config) (*Agent, error) {
	if cfg.Log == nil || cfg.Provider == nil || cfg.NewID == nil {
		return nil, errors.New("agent: Log, Provider and NewID are required")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	conf, err := newConfiguration(cfg.Model, cfg.SystemPrompt, cfg.EnvironmentIdentity, cfg.Tools)
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
	opID := a.cfg.NewID()
	entryID := a.cfg.NewID()
	facts := []session.Fact{
		{ID: entryID, Entry: &session.UserEntry{Content: prompt}},
		{Record: &session.RunStarted{OperationID: opID, InputEntryID: entryID}},
	}
	started := OperationStarted{OperationID: opID, Kind: session.OperationRun}
	if err := a.commit(ctx, facts, started); err != nil {
		return Result{}, fmt.Errorf("accept prompt: %w", err)
	}
	return a.drive(ctx, false)
}

// settleOpen resumes an operation that an earlier error or process left
// open, so a new prompt is never refused just because the last one broke
// off. It returns a Result only when the open operation cannot be finished
// (blocked), and then nothing new may start.
func (a *Agent) settleOpen(ctx context.Context) (*Result, error) {
	if a.cfg.Log.State().Idle() {
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
	return a.resume(ctx)
}

func (a *Agent) resume(ctx context.Context) (Result, error) {
	st := a.cfg.Log.State()
	if st.Idle() {
		return Result{Outcome: session.OutcomeCompleted}, nil
	}
	op := st.Operation
	a.emit(OperationStarted{OperationID: op.OperationID, Kind: op.Kind, Recovery: true})
	return a.drive(ctx, true)
}

// Current returns the planner's view of this agent's configuration.
func (a *Agent) Current() recovery.Current { return a.conf.current }

// commit appends facts under the agent lock; evs are the events the
// commit settles, delivered in commit order.
func (a *Agent) commit(ctx context.Context, facts []session.Fact, evs ...Event) error {
	a.mu.Lock()
	_, err := a.cfg.Log.Commit(ctx, facts)
	if err == nil {
		a.events.push(evs...)
	}
	a.mu.Unlock()
	a.events.drain(a.sink)
	return err
}

// commitUnlessAborted appends facts unless an abort is already durable for
// the open operation; then it appends nothing and reports aborted. This is
// the serialization point of the abort race (runtime.md §3).
func (a *Agent) commitUnlessAborted(ctx context.Context, facts []session.Fact, evs ...Event) (aborted bool, err error) {
	a.cfg.hooks.beforeSettle()
	a.mu.Lock()
	if op := a.cfg.Log.State().Operation; op != nil && op.AbortRequested {
		a.mu.Unlock()
		return true, nil
	}
	_, err = a.cfg.Log.Commit(ctx, facts)
	if err == nil {
		a.events.push(evs...)
	}
	a.mu.Unlock()
	a.events.drain(a.sink)
	return false, err
}

// beginPhase commits facts that open an effect (a stepAttempt or a
// toolStarted) and marks the phase active, atomically with respect to
// Abort. It returns a context that Abort cancels. If an abort is already
// durable, nothing is committed and ok is false.
func (a *Agent) beginPhase(ctx context.Context, phase session.Phase, toolCallID string, facts []session.Fact, evs ...Event) (phaseCtx context.Context, done func(), ok bool, err error) {
	a.lockYieldingToAbort()
	defer a.events.drain(a.sink)
	defer a.mu.Unlock()
	if op := a.cfg.Log.State().Operation; op != nil && op.AbortRequested {
		return nil, nil, false, nil
	}
	if len(facts) > 0 {
		if _, err := a.cfg.Log.Commit(ctx, facts); err != nil {
			return nil, nil, false, err
		}
	}
	a.events.push(evs...)
	pctx, cancel := context.WithCancel(ctx)
	ap := &activePhase{phase: phase, toolCallID: toolCallID, cancel: cancel}
	a.active = ap
	done = func() {
		a.mu.Lock()
		if a.active == ap {
			a.active = nil
		}
		a.mu.Unlock()
		cancel()
	}
	return pctx, done, true, nil
}

// Abort requests an abort of the open operation: it commits abortRequested
// (waiting for the append), then signals the active phase. Reconciliation
// is done by the goroutine driving the operation. Abort returns false when
// there is nothing to abort, or an abort is already durable (a second Esc is
// harmless).
func (a *Agent) Abort(ctx context.Context) (bool, error) {
	a.abortsWaiting.Add(1)
	a.mu.Lock()
	a.abortsWaiting.Add(-1)
	st := a.cfg.Log.State()
	op := st.Operation
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

// lockYieldingToAbort takes mu, letting any Abort that is already waiting
// for it go first.
func (a *Agent) lockYieldingToAbort() {
	for {
		a.mu.Lock()
		if a.abortsWaiting.Load() == 0 {
			return
		}
		a.mu.Unlock()
		time.Sleep(time.Millisecond)
	}
}

func pendingToolCall(op *session.Operation) string {
	for _, t := range op.ToolCalls {
		if t.Status == session.ToolPending {
			return t.ToolCallID
		}
	}
	return ""
}
