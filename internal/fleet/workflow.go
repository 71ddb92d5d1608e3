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
// A suite whose tasks are in the blob store runs in batches (runBatches).
func SuiteWorkflow(ctx workflow.Context, s Suite) (Progress, error) {
	if s.TasksKey != "" {
		return runBatches(ctx, s)
	}
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

// runBatches runs a big suite as child workflows of s.Batch tasks each:
// a child's history holds its tasks and results, the suite's only a few
// events per child and a count, so neither grows with the suite (a
// history passes Temporal's limits at 51,200 events or 50 MB). The
// progress query names the children; each answers its own results.
func runBatches(ctx workflow.Context, s Suite) (Progress, error) {
	n := (s.Total + s.Batch - 1) / s.Batch
	p := Progress{Total: s.Total, Results: []Result{}, Batches: make([]string, n), Batch: s.Batch}
	if err := workflow.SetQueryHandler(ctx, ProgressQuery, func() (Progress, error) { return p, nil }); err != nil {
		return p, err
	}
	sel := workflow.NewSelector(ctx)
	parent := workflow.GetInfo(ctx).WorkflowExecution.ID
	for i := range n {
		p.Batches[i] = fmt.Sprintf("%s-batch-%04d", parent, i+1)
		b := s
		b.TasksKey, b.Total, b.Batch, b.Names = "", 0, 0, nil
		cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: p.Batches[i]})
		f := workflow.ExecuteChildWorkflow(cctx, BatchWorkflowName, BatchInput{Suite: b, TasksKey: s.TasksKey, From: i * s.Batch, To: min((i+1)*s.Batch, s.Total)})
		sel.AddFuture(f, func(f workflow.Future) {
			// A failed batch still answers its results; the client
			// reports what it has.
			_ = f.Get(ctx, nil)
		})
	}
	for range n {
		sel.Select(ctx)
	}
	return p, ctx.Err()
}

// BatchInput is one child of a big suite: the tasks From..To of the
// suite's task list at TasksKey.
type BatchInput struct {
	Suite    Suite  `json:"suite"`
	TasksKey string `json:"tasksKey"`
	From     int    `json:"from"`
	To       int    `json:"to"`
}

// BatchWorkflow loads its tasks from the blob store (an activity: a
// workflow does no I/O) and runs them as SuiteWorkflow does; it returns
// how many finished (its results are its progress query's answer).
func BatchWorkflow(ctx workflow.Context, in BatchInput) (int, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 2 * time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5},
	})
	var tasks []Task
	if err := workflow.ExecuteActivity(actx, LoadTasksName, in.TasksKey, in.From, in.To).Get(ctx, &tasks); err != nil {
		return 0, err
	}
	s := in.Suite
	s.Tasks = tasks
	p, err := SuiteWorkflow(ctx, s)
	return len(p.Results), err
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
