// The agent run of a task: its command line, its environment, and why it
// ended.

package fleet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"go.temporal.io/sdk/temporal"

	"github.com/tiny-agent/tiny-go/internal/eval"
	"github.com/tiny-agent/tiny-go/internal/procs"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// agentRun is how the agent process ended.
type agentRun struct {
	exit       int
	stderr     string
	overBudget string
	timedOut   bool
	uploadMs   int64
	// cost is the US dollars of every attempt; reported what the store
	// has.
	cost, reported float64
}

func (r agentRun) why() string {
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	if l := lines[len(lines)-1]; l != "" {
		return ": " + l
	}
	return ""
}

// runAgent runs tiny-go in repo — a new run of the prompt, or the
// recovery of the restored session — while sy keeps it durable and the
// activity heartbeats the committed facts.
func (a *Activities) runAgent(ctx context.Context, t Task, sy *syncer, root, repo string, evalTask *eval.Task, attempt int32) (agentRun, error) {
	run := agentRun{exit: -1}
	taskDir := ""
	if evalTask != nil {
		taskDir = evalTask.Dir
	}
	args, finished, err := agentArgs(t, sy.state(), taskDir, repo)
	if err != nil {
		return run, err
	}
	if finished {
		run.exit = 0 // it finished before the last worker died
		return run, nil
	}
	earlier, err := a.earlierCost(ctx, sy.prefix, attempt)
	if err != nil {
		return run, err
	}
	// As under `tiny-go eval`, the agent reports the cost of each reply
	// to a log (internal/eval's child HTTP client): the cost budget.
	costLog := filepath.Join(root, "eval.log")
	var stderr bytes.Buffer
	events := &eventLog{}
	cmd := exec.Command(a.TinyGo, args...)
	cmd.Dir = repo
	cmd.Env = a.agentEnv(t, root, costLog)
	cmd.Stdout = events
	cmd.Stderr = eval.TailWriter(&stderr, 4096)
	// Its own group (SIGTERM there is a durable abort); and it dies with
	// the worker, as on a machine that is gone.
	cmd.SysProcAttr = procs.DiesWithUs(&syscall.SysProcAttr{Setpgid: true})
	if err := cmd.Start(); err != nil {
		return run, temporal.NewNonRetryableApplicationError("start tiny-go: "+err.Error(), ErrConfiguration, err)
	}
	sv := &supervisor{a: a, ctx: ctx, t: t, sy: sy, cmd: cmd, events: events, run: &run,
		earlier: earlier, costLog: costLog, costKey: fmt.Sprintf("%s/cost-%d", sy.prefix, attempt),
		eventsKey: fmt.Sprintf("%s/events-%d.jsonl", sy.prefix, attempt)}
	waitErr := sv.watch()
	run.stderr = stderr.String()
	var ee *exec.ExitError
	switch {
	case waitErr == nil:
		run.exit = 0
	case errors.As(waitErr, &ee):
		run.exit = ee.ExitCode()
	default:
		return run, waitErr
	}
	if sv.syncErr != nil {
		return run, sv.syncErr
	}
	if run.exit == 2 {
		return run, temporal.NewNonRetryableApplicationError("tiny-go refused the task's settings"+run.why(), ErrConfiguration, nil)
	}
	return run, nil
}

// agentArgs are tiny-go's arguments for the task: a new run of its
// prompt, or the recovery of the restored session st. finished says st
// had already finished, so there is nothing to run. taskDir is the eval
// task's folder ("" for none).
func agentArgs(t Task, st *session.State, taskDir, repo string) (args []string, finished bool, err error) {
	approval := t.Approval
	if approval == "" {
		approval = "auto"
	}
	args = []string{"--json", "--cwd", repo, "--approval", approval}
	if t.Model != "" && !hasFlag(t.Args, "--model") {
		args = append(args, "--model", t.Model)
	}
	if t.Sandbox != "" {
		args = append(args, "--sandbox", t.Sandbox)
	}
	args = append(args, t.Args...)
	prompt := t.Prompt
	if t.Source.EvalTask != "" && prompt == "" {
		p, extra, _, err := (&eval.Task{Name: t.Name, Dir: taskDir}).Input()
		if err != nil {
			return nil, false, temporal.NewNonRetryableApplicationError(err.Error(), ErrConfiguration, err)
		}
		prompt = p
		args = append(args, extra...)
	}
	switch {
	case st == nil:
		return append(args, "--", prompt), false, nil
	case st.Operation != nil:
		return append(args, "--session", st.Header.ID), false, nil // recover it, then exit
	case st.LastFinished.Outcome != "":
		return nil, true, nil
	}
	return append(args, "--session", st.Header.ID, "--", prompt), false, nil
}

// agentEnv is the agent's environment: the worker's, made stable, with
// the task's endpoint and provider and eval's cost log at costLog.
func (a *Activities) agentEnv(t Task, root, costLog string) []string {
	env := append(append([]string{}, a.Env...), eval.StableEnv()...)
	env = append(env, "TINY_AGENT_ENVIRONMENT_IDENTITY=fleet:"+t.Key)
	// The workspace is an overlay, which cannot hold tiny-go's own
	// per-command overlays: their layers go beside it (cache.go).
	env = append(env, "TINY_OVERLAY_LAYERS="+filepath.Join(root, txLayers))
	env = append(env, eval.EnvRoot+"="+root, eval.EnvLog+"="+costLog, eval.EnvRecord+"=", eval.EnvReplay+"=")
	if t.Endpoint != "" {
		env = append(env, "TINY_ENDPOINT="+t.Endpoint)
	}
	if t.Provider != "" {
		env = append(env, "TINY_PROVIDER="+t.Provider)
	}
	return env
}
