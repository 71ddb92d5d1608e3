// Package evalcmd is `tiny-go eval`: run eval tasks and report pass rate,
// time and tokens, and `eval compare`.
package evalcmd

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/eval"
)

// evalFlags are the flags of `tiny-go eval`.
type evalFlags struct {
	json         bool
	html         string
	repeat       int
	parallel     int
	agentTimeout time.Duration
	testTimeout  time.Duration
	record       string
	replay       string
	model        string
	keep         bool
	workDir      string
}

// NewCommand is `tiny-go eval`.
func NewCommand(a *cmdutil.Factory) *cobra.Command {
	var opts evalFlags
	cmd := &cobra.Command{
		Use:   "eval DIR...",
		Short: "Run eval tasks (prompt.txt, fixture/, test.sh) and report pass rate, time and tokens",
		Long: `Each DIR is a task folder, or a folder of task folders. A task's fixture/ is
copied to a fresh git repository, tiny-go runs prompt.txt there in its own
process, and test.sh decides: exit 0 is a pass. An optional args.txt holds
extra tiny-go flags, one per line.

--record DIR stores each task's model exchange (secrets redacted);
--replay DIR answers from those recordings without any network, and fails a
task at the first request that differs from its recording.`,
		Example: `  tiny-go eval evals/                                  # against $TINY_ENDPOINT / OpenRouter
  tiny-go eval evals/ --repeat 3 --parallel 2 --json > run.json
  tiny-go eval evals/ --replay evals/recorded/         # offline, deterministic
  tiny-go eval evals/ --record my-recordings/ --html report.html
  tiny-go eval compare before.json after.json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmdutil.UsageErrorf("%s needs at least one task folder (see '%s --help')", cmd.CommandPath(), cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEval(cmd.Context(), a, opts, args)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.json, "json", false, "print the results as JSON on stdout (the table goes to stderr)")
	fl.StringVar(&opts.html, "html", "", "also write a self-contained HTML report to this file")
	fl.IntVar(&opts.repeat, "repeat", 1, "run each task this many times (pass rate and spread)")
	fl.IntVar(&opts.parallel, "parallel", 1, "run this many tasks at once, each in its own directory and process")
	fl.DurationVar(&opts.agentTimeout, "timeout", eval.DefaultAgentTimeout, "time limit of the agent per task")
	fl.DurationVar(&opts.testTimeout, "test-timeout", eval.DefaultTestTimeout, "time limit of test.sh per task")
	fl.StringVar(&opts.record, "record", "", "store each task's model exchange in this folder")
	fl.StringVar(&opts.replay, "replay", "", "serve the model's replies from the recordings in this folder (offline)")
	fl.StringVar(&opts.model, "model", "", "model id (default $TINY_MODEL; under --replay the recorded one)")
	fl.BoolVar(&opts.keep, "keep", false, "keep each task's directory (session, logs) and print where")
	fl.StringVar(&opts.workDir, "work-dir", "", "make task directories here (default the system's temporary directory)")
	cmd.AddCommand(newEvalCompareCommand(a))
	return cmd
}

func runEval(ctx context.Context, a *cmdutil.Factory, f evalFlags, args []string) error {
	if f.repeat < 1 || f.parallel < 1 {
		return cmdutil.UsageErrorf("--repeat and --parallel must be at least 1")
	}
	if f.agentTimeout <= 0 || f.testTimeout <= 0 {
		return cmdutil.UsageErrorf("--timeout and --test-timeout must be positive durations such as 10m")
	}
	tasks, err := eval.LoadTasks(args)
	if err != nil {
		return cmdutil.UsageError{Err: err}
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	cfg := eval.Config{
		Tasks:        tasks,
		Repeat:       f.repeat,
		Parallel:     f.parallel,
		AgentTimeout: f.agentTimeout,
		TestTimeout:  f.testTimeout,
		Record:       f.record,
		Replay:       f.replay,
		Model:        cmp.Or(strings.TrimSpace(f.model), strings.TrimSpace(a.Getenv("TINY_MODEL"))),
		WorkDir:      f.workDir,
		Keep:         f.keep,
		Progress:     a.Stderr,
	}
	if f.replay != "" && f.model == "" {
		cfg.Model = "" // the recording's, not $TINY_MODEL
	}
	rep, err := eval.Run(ctx, cfg)
	if err != nil {
		return cmdutil.UsageError{Err: err}
	}
	table := a.Stdout
	if f.json {
		table = a.Stderr
		if err := rep.WriteJSON(a.Stdout); err != nil {
			return err
		}
	}
	if err := rep.WriteTable(table); err != nil {
		return err
	}
	if f.html != "" {
		if err := writeHTMLReport(f.html, rep); err != nil {
			return fmt.Errorf("--html: %w", err)
		}
	}
	if !rep.AllPassed() {
		return cmdutil.ExitError{Code: cmdutil.ExitFailed}
	}
	return nil
}

func writeHTMLReport(path string, rep *eval.Report) error {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := rep.WriteHTML(out); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func newEvalCompareCommand(a *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "compare A.json B.json",
		Short: "Compare two `tiny-go eval --json` results: pass rate, tokens and time per task",
		Args:  cmdutil.ExactArgs(2, "two result files"),
		RunE: func(cmd *cobra.Command, args []string) error {
			before, err := eval.LoadReport(args[0])
			if err != nil {
				return cmdutil.UsageError{Err: err}
			}
			after, err := eval.LoadReport(args[1])
			if err != nil {
				return cmdutil.UsageError{Err: err}
			}
			return eval.Compare(before, after).WriteTable(a.Stdout)
		},
	}
}
