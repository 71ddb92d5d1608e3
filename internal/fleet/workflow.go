package fleet

import (
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/tiny-agent/tiny-go/internal/eval"
)

// SuiteWorkflow runs every task of s as its own activity, all at once
// (the workers' --concurrency is the limit), and returns the results in
// the order they finished. The progress query answers the results so far.
func SuiteWorkflow(ctx workflow.Context, s Suite) (Progress, error) {
	p := Progress{Total: len(s.Tasks), Results: []Result{}}
	if err := workflow.SetQueryHandler(ctx, ProgressQuery, func() (Progress, error) { return p, nil }); err != nil {
		return p, err
	}
	sel := workflow.NewSelector(ctx)
	for _, t := range s.Tasks {
		actx := workflow.WithActivityOptions(ctx, activityOptions(t))
		f := workflow.ExecuteActivity(actx, RunTaskName, t)
		sel.AddFuture(f, func(f workflow.Future) {
			var r Result
			if err := f.Get(ctx, &r); err != nil {
				r = failed(t, err)
			}
			p.Results = append(p.Results, r)
		})
	}
	for range s.Tasks {
		sel.Select(ctx)
	}
	return p, ctx.Err()
}

// activityOptions are the limits of one task: time per attempt, a
// heartbeat that notices a dead worker, and the retry policy.
func activityOptions(t Task) workflow.ActivityOptions {
	attempts := t.MaxAttempts
	if attempts <= 0 {
		attempts = 5
	}
	hb := t.HeartbeatTimeout
	if hb <= 0 {
		hb = 30 * time.Second
	}
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = eval.DefaultAgentTimeout
	}
	return workflow.ActivityOptions{
		// The agent's time, then test.sh's, then the final uploads.
		StartToCloseTimeout: timeout + firstDuration(t.TestTimeout, eval.DefaultTestTimeout) + time.Minute,
		HeartbeatTimeout:    hb,
		// Cancelling the workflow is Esc: the activity aborts durably and
		// the workflow waits for it.
		WaitForCancellation: true,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:        time.Second,
			BackoffCoefficient:     2,
			MaximumInterval:        30 * time.Second,
			MaximumAttempts:        int32(attempts),
			NonRetryableErrorTypes: []string{ErrConfiguration, ErrBudgetExceeded},
		},
	}
}

// failed is the result of a task whose every attempt failed.
func failed(t Task, err error) Result {
	r := Result{RunResult: eval.RunResult{Task: t.Name, Rep: t.Rep, Status: eval.StatusError, AgentExit: -1, TestExit: -1,
		Metrics: eval.Metrics{ToolCalls: map[string]int{}}}}
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app.HasDetails() {
		_ = app.Details(&r)
	}
	var to *temporal.TimeoutError
	var cancelled *temporal.CanceledError
	switch {
	case errors.As(err, &to):
		r.Status, r.Reason = eval.StatusTimeout, fmt.Sprintf("the task ran out of time (%s)", to.TimeoutType())
	case errors.As(err, &cancelled):
		r.Reason = "the task was cancelled"
	case errors.As(err, &app):
		r.Reason = app.Message()
	default:
		r.Reason = err.Error()
	}
	r.Passed = false
	return r
}
