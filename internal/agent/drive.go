package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/tiny-agent/tiny-go/internal/recovery"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// run is the bookkeeping of one drive of an operation by this process.
type run struct {
	opID     string
	kind     session.OperationKind
	recovery bool
	start    time.Time
	usage    session.Usage
	// attempts and tools this process started, so their projections are
	// completed rather than reconciled.
	ownAttempts map[string]ModelInfo
	ownTools    map[string]ToolInfo // by toolStartedId
	// cut is, by toolStartedId, what an interrupted call of this process
	// printed before it was stopped, and how long it ran: shown to the
	// user, never committed.
	cut map[string]ToolOutcome
}

// drive applies recovery plans until the operation is finished or blocked.
// The live path and the resume path are the same loop: the planner decides
// the next step from the durable state, and only the effects differ in who
// started them.
func (a *Agent) drive(ctx context.Context, recovering bool) (Result, error) {
	st := a.cfg.Log.State()
	if st.Idle() {
		return Result{Outcome: session.OutcomeCompleted}, nil
	}
	r := &run{
		opID:        st.Operation.OperationID,
		kind:        st.Operation.Kind,
		recovery:    recovering,
		start:       a.cfg.Now(),
		ownAttempts: map[string]ModelInfo{},
		ownTools:    map[string]ToolInfo{},
		cut:         map[string]ToolOutcome{},
	}
	for {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		a.cfg.hooks.betweenPhases()
		st := a.cfg.Log.State()
		op := st.Operation
		if op == nil || op.OperationID != r.opID {
			return Result{}, fmt.Errorf("operation %s ended without this process seeing its terminal", r.opID)
		}
		var (
			res *Result
			err error
		)
		switch p := recovery.Plan(st, a.conf.current).(type) {
		case recovery.Finish:
			res, err = a.finish(ctx, r, op, p)
		case recovery.StartStep:
			res, err = a.step(ctx, r, st, p)
		case recovery.StartTool:
			if b := a.batch(op, p); b != nil {
				err = a.runBatch(ctx, r, op, b)
				break
			}
			err = a.toolStep(ctx, r, op, p)
		case recovery.AppendSynthetic:
			if c, ok := a.continuation(op, p); ok {
				err = a.toolStep(ctx, r, op, c)
				break
			}
			err = a.appendSynthetic(ctx, r, op, p)
		case recovery.CloseAttempt:
			err = a.closeAttempt(ctx, r, op, p)
		case recovery.Blocked:
			res, err = a.blocked(ctx, r, op, p)
		default:
			return Result{}, fmt.Errorf("unknown recovery plan %T", p)
		}
		if err != nil {
			return Result{}, err
		}
		if res != nil {
			return *res, nil
		}
	}
}

func (a *Agent) finish(ctx context.Context, r *run, op *session.Operation, p recovery.Finish) (*Result, error) {
	rec := &session.OperationFinished{
		OperationID:   op.OperationID,
		OperationKind: op.Kind,
		Outcome:       p.Outcome,
		FinalEntryID:  p.FinalEntryID,
		Error:         p.Error,
	}
	if op.Kind == session.OperationRun && p.Outcome == session.OutcomeCompleted {
		rec.Completion = p.Completion
		if rec.Completion == "" {
			rec.Completion = session.CompletionNormal
		}
	}
	aborted, err := a.commitPlanned(ctx, op, []session.Fact{{Record: rec}})
	if err != nil {
		return nil, fmt.Errorf("commit terminal: %w", err)
	}
	if aborted {
		return nil, nil // the next plan reconciles the abort
	}
	return a.finished(r, rec), nil
}

// commitPlanned commits the facts of a plan for op. The reconciliation of
// a durable abort commits unconditionally; anything else goes through the
// abort check, so an Esc that lands between planning and committing is
// never dropped (aborted reports that it won, and nothing was written).
func (a *Agent) commitPlanned(ctx context.Context, op *session.Operation, facts []session.Fact, evs ...Event) (aborted bool, err error) {
	if op.AbortRequested {
		return false, a.reconcile(ctx, facts, evs...)
	}
	return a.settle(ctx, facts, evs...)
}

// step runs a planned step with its executor: a compaction's summary
// request, or a run's model request unless the run ends here for a
// compaction (between steps, past the share of the window).
func (a *Agent) step(ctx context.Context, r *run, st *session.State, p recovery.StartStep) (*Result, error) {
	if p.StepKind == session.StepCompaction {
		return a.compactionStep(ctx, r, st, p)
	}
	if res, handled, err := a.compactBetweenSteps(ctx, r, st, p); handled || err != nil {
		return res, err
	}
	return a.assistantStep(ctx, r, st, p)
}

func (a *Agent) blocked(ctx context.Context, r *run, op *session.Operation, p recovery.Blocked) (*Result, error) {
	if p.Reason != recovery.BlockedAttemptsExhausted || op.Step == nil {
		return &Result{OperationID: op.OperationID, Kind: op.Kind, Blocked: string(p.Reason)}, nil
	}
	// A run whose provider kept dying must not stay stuck: close the second
	// attempt and fail the operation (runtime.md §2).
	e := session.ErrorInfo{Code: session.CodeAttemptsExhausted, Message: "the model request was interrupted twice; giving up"}
	fin := &session.OperationFinished{OperationID: op.OperationID, OperationKind: op.Kind, Outcome: session.OutcomeFailed, Error: &e}
	facts := []session.Fact{
		{Record: &session.StepFailed{OperationID: op.OperationID, StepID: op.Step.StepID, AttemptID: op.Step.AttemptID, Error: e}},
		{Record: fin},
	}
	aborted, err := a.commitPlanned(ctx, op, facts)
	if err != nil {
		return nil, fmt.Errorf("commit attempts exhausted: %w", err)
	}
	if aborted {
		return nil, nil
	}
	a.reportAttemptClosed(r, op, "failed", e.Code)
	return a.finished(r, fin), nil
}

func (a *Agent) closeAttempt(ctx context.Context, r *run, op *session.Operation, p recovery.CloseAttempt) error {
	if op.Step == nil {
		return fmt.Errorf("close attempt: operation %s has no step", op.OperationID)
	}
	rec := &session.StepFailed{OperationID: op.OperationID, StepID: op.Step.StepID, AttemptID: op.Step.AttemptID, Error: p.Error}
	if err := a.reconcile(ctx, []session.Fact{{Record: rec}}); err != nil {
		return fmt.Errorf("commit closed attempt: %w", err)
	}
	a.reportAttemptClosed(r, op, "cancelled", p.Error.Code)
	return nil
}

// reportAttemptClosed completes the model projection of the open attempt:
// as model.completed when this process started it, else model.reconciled.
func (a *Agent) reportAttemptClosed(r *run, op *session.Operation, outcome, errType string) {
	info, own := r.ownAttempts[op.Step.AttemptID]
	o := ModelOutcome{Outcome: outcome, ErrorType: errType}
	if own {
		a.emit(ModelCompleted{Model: info, Outcome: o})
		return
	}
	dead := ModelInfo{
		OperationID: op.OperationID, Kind: op.Kind, StepID: op.Step.StepID,
		AttemptID: op.Step.AttemptID, Attempt: op.Step.Attempt, Recovery: true,
	}
	a.emit(ModelReconciled{Model: dead, Outcome: o})
}

func (a *Agent) appendSynthetic(ctx context.Context, r *run, op *session.Operation, p recovery.AppendSynthetic) error {
	if op.Assistant == nil {
		return fmt.Errorf("synthetic results: operation %s has no assistant entry", op.OperationID)
	}
	facts := make([]session.Fact, 0, len(p.Results))
	for _, s := range p.Results {
		if s.ToolStartedID != "" {
			facts = append(facts, session.Fact{ID: s.ResultEntryID, Entry: &session.ToolResultEntry{
				StepID: op.Assistant.StepID, ToolCallID: s.ToolCallID, Content: s.Content,
				ToolName: s.ToolName, ToolStartedID: s.ToolStartedID, Result: session.ResultInterrupted,
			}})
			continue
		}
		facts = append(facts, session.Fact{Entry: &session.SyntheticEntry{
			StepID: op.Assistant.StepID, AssistantEntryID: s.AssistantEntryID, ToolIndex: s.ToolIndex,
			ToolCallID: s.ToolCallID, Content: s.Content, ToolName: s.ToolName, Reason: s.Reason,
		}})
	}
	// Interrupted results of tools this process started complete their
	// projections.
	var evs []Event
	for _, s := range p.Results {
		if info, ok := r.ownTools[s.ToolStartedID]; ok && s.ToolStartedID != "" {
			out := ToolOutcome{Outcome: "cancelled", Content: s.Content}
			if c, ok := r.cut[s.ToolStartedID]; ok {
				out.Duration, out.Partial = c.Duration, c.Partial
			}
			evs = append(evs, ToolCompleted{Tool: info, Outcome: out})
		}
	}
	aborted, err := a.commitPlanned(ctx, op, facts, evs...)
	if err != nil {
		return fmt.Errorf("commit synthetic results: %w", err)
	}
	if !aborted {
		for _, s := range p.Results {
			delete(r.ownTools, s.ToolStartedID)
			delete(r.cut, s.ToolStartedID)
		}
	}
	return nil
}
