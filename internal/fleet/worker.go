package fleet

import (
	"context"
	"fmt"
	"os"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// WorkerConfig is one `tiny-go worker`.
type WorkerConfig struct {
	Conn
	Concurrency int
	Activities  *Activities
}

// RunWorker serves suites and tasks until ctx is done; tasks under way are
// then cancelled (each aborts durably) and the worker stops.
func RunWorker(ctx context.Context, cfg WorkerConfig) error {
	cl, err := cfg.dial()
	if err != nil {
		return err
	}
	defer cl.Close()
	n := cfg.Concurrency
	if n <= 0 {
		n = 1
	}
	w := worker.New(cl, firstString(cfg.TaskQueue, DefaultTaskQueue), worker.Options{
		MaxConcurrentActivityExecutionSize: n,
		Identity:                           cfg.Identity,
		WorkerStopTimeout:                  abortGrace,
	})
	w.RegisterWorkflowWithOptions(SuiteWorkflow, workflow.RegisterOptions{Name: SuiteWorkflowName})
	w.RegisterWorkflowWithOptions(BatchWorkflow, workflow.RegisterOptions{Name: BatchWorkflowName})
	w.RegisterActivityWithOptions(cfg.Activities.RunTask, activity.RegisterOptions{Name: RunTaskName})
	w.RegisterActivityWithOptions(cfg.Activities.LoadTasks, activity.RegisterOptions{Name: LoadTasksName})
	if err := w.Start(); err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	fmt.Fprintf(os.Stderr, "tiny-go worker %s: serving task queue %s on %s, %d at a time\n", cfg.Identity, firstString(cfg.TaskQueue, DefaultTaskQueue), cfg.HostPort, n)
	<-ctx.Done()
	w.Stop()
	return nil
}

func defaultConverter() converter.DataConverter { return converter.GetDefaultDataConverter() }

// quietLogger drops the SDK's info and debug chatter; warnings and errors
// go to stderr, one line each.
type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(msg string, kv ...any) {
	fmt.Fprintln(os.Stderr, append([]any{"temporal: warning:", msg}, kv...)...)
}
func (quietLogger) Error(msg string, kv ...any) {
	fmt.Fprintln(os.Stderr, append([]any{"temporal: error:", msg}, kv...)...)
}

var _ log.Logger = quietLogger{}
