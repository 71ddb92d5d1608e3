// Package oneshot is the one-shot front end of an assembled Runner: it
// finishes an open operation, runs the prompt, and tells how it ended on
// stderr, with the exit code (docs/cli.md). Without a prompt it hands over
// to the interactive loop.
package oneshot

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/cli/assemble"
	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/ui"
)

// Run resumes an open operation of r, then runs promptText; without a
// prompt it runs interact (the interactive mode).
func Run(ctx context.Context, r *assemble.Runner, promptText string, interact func(context.Context) error) error {
	return (&runner{r}).operate(ctx, promptText, interact)
}

// runner is the assembled runner seen by the one-shot front end.
type runner struct{ *assemble.Runner }

// operate resumes an open operation, then runs the prompt (one-shot) or,
// without one, the interactive loop interact.
func (a *runner) operate(ctx context.Context, promptText string, interact func(context.Context) error) error {
	ctx, hardStop := context.WithCancel(ctx)
	defer hardStop()
	if a.OneShot != nil {
		defer a.OneShot.Close()
	}
	stop := a.OnSignals(hardStop)
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()

	if a.Agent.Pending() {
		res, err := a.Agent.Resume(ctx)
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("stopped before the recovery finished; resume with: tiny-go --session %s", a.Store.ID())
		}
		if err != nil {
			return fmt.Errorf("resume: %w", err)
		}
		if res.Blocked != "" {
			return errors.New(assemble.BlockedMessage(a.Store.ID(), res.Blocked))
		}
		if !a.Flags.JSON {
			fmt.Fprintf(a.IO.Stderr, "Recovered the open %s: %s.\n", res.Kind, describeOutcome(res))
		}
		if promptText == "" && a.Flags.JSON {
			return exitFor(res)
		}
	}
	if strings.TrimSpace(promptText) == "" && a.Flags.JSON {
		return nil // resumed with nothing open
	}
	if strings.TrimSpace(promptText) == "" {
		// Interactive mode handles signals itself (the Ctrl+C path).
		stop()
		stopped = true
		a.ExitReason = "prompt_input_exit"
		return interact(ctx)
	}
	text, err := a.Expand(promptText)
	if err != nil {
		return cmdutil.UsageError{Err: err}
	}
	res, err := a.Run(ctx, text)
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("stopped before the run finished; resume with: tiny-go --session %s", a.Store.ID())
	}
	if err != nil {
		return err
	}
	if a.OneShot != nil {
		a.OneShot.Finish(res)
	}
	discarded := a.DiscardConfigFailure()
	if !a.Flags.JSON {
		switch {
		case res.Completion == session.CompletionTruncated:
			fmt.Fprintln(a.IO.Stderr, ui.TruncatedLine)
		case res.Outcome != session.OutcomeCompleted:
			fmt.Fprintln(a.IO.Stderr, describeOutcome(res))
		}
		if !discarded {
			a.printResume()
		}
	}
	return exitFor(res)
}

func (a *runner) printResume() {
	if a.Resumable() {
		fmt.Fprintf(a.IO.Stderr, "Resume: tiny-go --session %s\n", a.Store.ID())
	}
}

func exitFor(res agent.Result) error {
	// A reply cut off while calling tools completed (nothing of it ran)
	// but did not do what was asked: like a cut-off text reply, non-zero.
	if res.Blocked != "" || res.Outcome != session.OutcomeCompleted || res.Completion == session.CompletionTruncated {
		return cmdutil.ExitError{Code: cmdutil.ExitFailed}
	}
	return nil
}

// describeOutcome is the one-line summary of how an operation ended.
func describeOutcome(res agent.Result) string {
	switch {
	case res.Blocked != "":
		return "blocked: " + res.Blocked
	case res.Outcome == session.OutcomeAborted && res.Kind == session.OperationCompaction:
		return "Compaction aborted."
	case res.Outcome == session.OutcomeAborted:
		return "Aborted."
	case res.Outcome == session.OutcomeFailed && res.Error != nil:
		return "Failed: " + res.Error.Message
	case res.Outcome == session.OutcomeFailed:
		return "Failed."
	case res.Completion == session.CompletionTruncated:
		return "completed (the reply was cut off by the model token limit; its tool calls were not run)"
	}
	return "completed"
}
