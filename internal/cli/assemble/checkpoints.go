package assemble

import (
	"context"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/cli/lspcmd"
	"github.com/tiny-agent/tiny-go/internal/cli/undowire"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// undo is the run's checkpoints and transactions (internal/cli/undowire),
// made on first use: after configure, which set the working directory and
// the sandbox.
func (a *Runner) undo() *undowire.Undo {
	if a.checkpoints == nil {
		a.checkpoints = undowire.New(undowire.Options{Cwd: a.Cwd, Getenv: a.IO.Getenv, Stderr: a.IO.Stderr, Sandbox: a.Guard.Sandbox(), Review: a.reviewing})
	}
	return a.checkpoints
}

// CheckpointHook returns the agent's BeforeEffect for the current session:
// its checkpoints (nil when off), with the language servers' part.
func (a *Runner) CheckpointHook() agent.BeforeEffect {
	return a.LSP.Before(a.undo().Hook(a.Store.Path()))
}

// checkNotTruncated refuses to resume a session whose file lost the tool
// calls its checkpoint index records (undowire.CheckNotTruncated).
func (a *Runner) checkNotTruncated() error {
	return undowire.CheckNotTruncated(a.Store)
}

// newLSP prepares the language servers of a run (internal/cli/lspcmd);
// env is the commands' environment (without tiny-go's keys).
func (a *Runner) newLSP(env []string) (*lspcmd.Servers, error) {
	return lspcmd.NewServers(lspcmd.RunOptions{
		Getenv: a.IO.Getenv, Settings: a.IO.Settings, Cwd: a.Cwd, Plugins: a.tools,
		Env: env, Sandbox: a.Guard.Sandbox(), Procs: a.Guard.Procs(), Changed: a.undo().Changed,
	})
}

// RunUserShell runs a !command through the runner's own bash tool, with
// its checkpoint like a bash call of the model (undowire.RunUserShell).
func (a *Runner) RunUserShell(ctx context.Context, id string, args jsontext.Value) tools.Result {
	var before agent.BeforeEffect
	if a.Agent != nil {
		before = a.Agent.Config().BeforeEffect
	}
	return undowire.RunUserShell(ctx, before, a.shellTool, id, args)
}

// reviewer is bash's Reviewer in --approval review: the session's gate
// asks.
// reviewing says whether a command's changes are reviewed before they
// land now (so it must run over an overlay, not journaled on the tree).
func (a *Runner) reviewing() bool {
	if a.Embed != nil {
		return a.Mode != nil && a.Mode.Mode() == approval.Review
	}
	return a.Guard.Approval() == approval.Review
}

func (a *Runner) reviewer() tools.Reviewer {
	if a.Guard.Approval() != approval.Review && a.Embed == nil {
		return nil
	}
	return func(ctx context.Context, command string, changes []string) (bool, error) {
		// An editor's session reviews while its mode is review.
		if a.Gate == nil || (a.Embed != nil && a.Mode.Mode() != approval.Review) {
			return true, nil
		}
		return a.Gate.Review(ctx, command, changes)
	}
}
