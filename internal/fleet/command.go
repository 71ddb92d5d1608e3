package fleet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tiny-agent/tiny-go/internal/eval"
)

// Main is the program of tiny-go-fleet, which tiny-go runs for `worker`,
// `eval --temporal` and `run --temporal`: the Temporal SDK (gRPC,
// protobuf) stays out of tiny-go's own start-up (docs/fleet.md). It
// returns the exit code: 0 success, 1 failure, 2 usage.
func Main(args []string, stdout, stderr io.Writer) int {
	root := &cobra.Command{Use: "tiny-go", SilenceErrors: true, SilenceUsage: true}
	root.AddCommand(workerCommand(stderr), evalCommand(stdout, stderr), runCommand(stdout, stderr))
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	err := root.ExecuteContext(ctx)
	var ce codeError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ce) && ce.err == nil:
		return ce.code
	case errors.As(err, &ce):
		fmt.Fprintf(stderr, "tiny-go: %s\n", ce.err)
		return ce.code
	}
	fmt.Fprintf(stderr, "tiny-go: %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
	if strings.HasPrefix(err.Error(), "unknown ") || strings.HasPrefix(err.Error(), "accepts ") || strings.HasPrefix(err.Error(), "requires ") {
		return 2
	}
	return 1
}

type codeError struct {
	code int
	err  error
}

func (e codeError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func usage(format string, args ...any) error { return codeError{2, fmt.Errorf(format, args...)} }

func connFlags(fl *pflag.FlagSet, c *Conn) {
	fl.StringVar(&c.HostPort, "temporal", os.Getenv("TINY_TEMPORAL"), "Temporal frontend HOST:PORT (default $TINY_TEMPORAL)")
	fl.StringVar(&c.Namespace, "namespace", firstString(os.Getenv("TINY_TEMPORAL_NAMESPACE"), DefaultNamespace), "Temporal namespace")
	fl.StringVar(&c.TaskQueue, "task-queue", DefaultTaskQueue, "Temporal task queue")
	fl.BoolVar(&c.TLS, "tls", false, "dial Temporal with TLS")
	fl.StringVar(&c.CertFile, "tls-cert", "", "client certificate for mTLS (Temporal Cloud)")
	fl.StringVar(&c.KeyFile, "tls-key", "", "its private key")
	c.APIKey = os.Getenv("TEMPORAL_API_KEY") // never a flag: it would show in ps
	fl.StringVar(&c.Blob, "blob", os.Getenv("TINY_FLEET_BLOB"), "blob store URL for sessions, snapshots and diffs: file:///dir, s3://bucket, gs://bucket (default $TINY_FLEET_BLOB)")
}

func (c Conn) check() error {
	if c.HostPort == "" {
		return usage("--temporal HOST:PORT is required (or $TINY_TEMPORAL)")
	}
	if c.Blob == "" {
		return usage("--blob URL is required (or $TINY_FLEET_BLOB): file:///shared/dir, s3://bucket or gs://bucket")
	}
	return nil
}

func workerCommand(stderr io.Writer) *cobra.Command {
	var cfg WorkerConfig
	var tinyGo, workDir string
	var blobTimeout time.Duration
	var cacheMemory string
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run agent tasks from a Temporal task queue",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cfg.check(); err != nil {
				return err
			}
			if cfg.Concurrency < 1 {
				return usage("--concurrency must be at least 1")
			}
			exe, err := findTinyGo(tinyGo)
			if err != nil {
				return usage("%v", err)
			}
			abs, err := filepath.Abs(workDir)
			if err != nil {
				return usage("--work-dir: %v", err)
			}
			inMemory, err := prepareCache(filepath.Join(abs, cacheDir), cacheMemory, stderr)
			if err != nil {
				return usage("--cache-memory: %v", err)
			}
			blobs, err := OpenBlobs(cmd.Context(), cfg.Blob)
			if err != nil {
				return usage("%v", err)
			}
			defer blobs.Close()
			blobs.OpTimeout = blobTimeout
			if cfg.Identity == "" {
				host, _ := os.Hostname()
				cfg.Identity = fmt.Sprintf("%d@%s", os.Getpid(), host)
			}
			cfg.Activities = &Activities{Blobs: blobs, TinyGo: exe, WorkRoot: abs, Identity: cfg.Identity, Env: os.Environ(),
				CacheInMemory: inMemory, Stderr: stderr}
			return RunWorker(cmd.Context(), cfg)
		},
	}
	fl := cmd.Flags()
	connFlags(fl, &cfg.Conn)
	fl.IntVar(&cfg.Concurrency, "concurrency", 1, "tasks run at once by this worker (about one per core)")
	fl.StringVar(&cfg.Identity, "identity", "", "this worker's name in results (default pid@host)")
	fl.StringVar(&tinyGo, "tiny-go", "", "the tiny-go executable the agent runs as (default the one beside this program, then $PATH)")
	fl.StringVar(&workDir, "work-dir", filepath.Join(os.TempDir(), "tiny-go-fleet"), "where task workspaces are made; the same path on every worker")
	fl.StringVar(&cacheMemory, "cache-memory", cacheAuto, "where the cached bases are: auto, a tmpfs of a quarter of the memory the worker may use where it may mount one (root or CAP_SYS_ADMIN), else disk; a size (e.g. 4g) for a tmpfs of that size; off for disk. In memory a cold base of many files is made several times faster")
	fl.DurationVar(&blobTimeout, "blob-timeout", DefaultBlobTimeout, "the time one blob store operation may take (plus 1s per MB written); then the attempt fails naming it")
	return cmd
}

// findTinyGo is path, or tiny-go beside this executable, or on $PATH.
func findTinyGo(path string) (string, error) {
	if path != "" {
		p, err := exec.LookPath(path)
		if err != nil {
			return "", fmt.Errorf("--tiny-go %s is not an executable", path)
		}
		return p, nil
	}
	if exe, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(exe), "tiny-go"); isExecutable(p) {
			return p, nil
		}
	}
	if p, err := exec.LookPath("tiny-go"); err == nil {
		return p, nil
	}
	return "", errors.New("cannot find the tiny-go executable; pass --tiny-go PATH")
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

type submitFlags struct {
	Conn
	settings Settings
	json     bool
	html     string
	wait     bool
	detach   bool
	repeat   int
}

func settingsFlags(fl *pflag.FlagSet, s *Settings) {
	fl.StringVar(&s.Model, "model", os.Getenv("TINY_MODEL"), "model id (default $TINY_MODEL)")
	fl.StringVar(&s.Endpoint, "endpoint", os.Getenv("TINY_ENDPOINT"), "model endpoint the workers use (default $TINY_ENDPOINT; credentials come from the workers' environment)")
	fl.StringVar(&s.Sandbox, "sandbox", "", "tiny-go --sandbox value for the agent")
	fl.StringVar(&s.Approval, "approval", "auto", "tiny-go --approval mode of the agent: auto, or plan (it changes nothing)")
	fl.DurationVar(&s.Timeout, "timeout", eval.DefaultAgentTimeout, "time limit of the agent per task attempt")
	fl.DurationVar(&s.TestTimeout, "test-timeout", eval.DefaultTestTimeout, "time limit of test.sh per task")
	fl.Int64Var(&s.MaxTokens, "max-tokens", 0, "token budget per task over all its attempts (0: none); over it the task stops and is not retried")
	fl.Float64Var(&s.MaxCostUSD, "max-cost", 0, "budget per task in US dollars over all its attempts, as the endpoint reports cost (0: none)")
	fl.DurationVar(&s.HeartbeatTimeout, "heartbeat-timeout", 30*time.Second, "how long a silent worker keeps its task before another worker takes it over")
	fl.IntVar(&s.MaxAttempts, "max-attempts", 5, "attempts per task (a dead worker's task is resumed by the next)")
}

func evalCommand(stdout, stderr io.Writer) *cobra.Command {
	var f submitFlags
	cmd := &cobra.Command{
		Use:   "eval DIR... --temporal HOST:PORT",
		Short: "Run an eval suite on Temporal workers",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.check(); err != nil {
				return err
			}
			if err := f.settings.check(); err != nil {
				return err
			}
			if f.repeat < 1 {
				return usage("--repeat must be at least 1")
			}
			tasks, err := eval.LoadTasks(args)
			if err != nil {
				return usage("%v", err)
			}
			id, err := SubmitSuite(cmd.Context(), f.Conn, tasks, f.repeat, f.settings, f.settings.Model)
			if err != nil {
				return err
			}
			fmt.Fprintf(stderr, "eval: suite %s: %d tasks × %d on %s (re-attach: tiny-go eval status %s --wait --temporal %s)\n",
				id, len(tasks), f.repeat, f.HostPort, id, f.HostPort)
			if f.detach {
				fmt.Fprintln(stdout, id)
				return nil
			}
			return f.follow(cmd.Context(), id, true, stdout, stderr)
		},
	}
	fl := cmd.Flags()
	connFlags(fl, &f.Conn)
	settingsFlags(fl, &f.settings)
	fl.IntVar(&f.repeat, "repeat", 1, "run each task this many times")
	fl.BoolVar(&f.json, "json", false, "print the results as JSON on stdout (the table goes to stderr)")
	fl.StringVar(&f.html, "html", "", "also write a self-contained HTML report to this file")
	fl.BoolVar(&f.detach, "detach", false, "print the suite's workflow id and exit; the suite goes on")
	cmd.AddCommand(statusCommand(stdout, stderr))
	return cmd
}

func statusCommand(stdout, stderr io.Writer) *cobra.Command {
	var f submitFlags
	cmd := &cobra.Command{
		Use:   "status WORKFLOW-ID",
		Short: "Show the results of a suite so far; --wait follows it to the end",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.HostPort == "" {
				return usage("--temporal HOST:PORT is required (or $TINY_TEMPORAL)")
			}
			return f.follow(cmd.Context(), args[0], f.wait, stdout, stderr)
		},
	}
	fl := cmd.Flags()
	connFlags(fl, &f.Conn)
	fl.BoolVar(&f.wait, "wait", false, "wait for the suite to end")
	fl.BoolVar(&f.json, "json", false, "print the results as JSON on stdout (the table goes to stderr)")
	fl.StringVar(&f.html, "html", "", "also write a self-contained HTML report to this file")
	return cmd
}

// follow prints each result as it arrives, then the report. Ctrl+C
// detaches; the suite goes on.
func (f *submitFlags) follow(ctx context.Context, id string, wait bool, stdout, stderr io.Writer) error {
	s, results, finished, err := Watch(ctx, f.Conn, id, wait, func(n, total, repeat int, r Result) {
		line := eval.ProgressLine(n, total, repeat, r.RunResult)
		if r.Attempts > 1 {
			line = strings.TrimRight(line, "\n") + fmt.Sprintf("  (%d attempts: %s)\n", r.Attempts, strings.Join(r.Workers, ", "))
		}
		fmt.Fprint(stderr, line)
	}, nil)
	if errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "eval: detached; the suite goes on (tiny-go eval status %s --wait)\n", id)
		return codeError{1, nil}
	}
	if err != nil {
		return err
	}
	rep := Report(s, results, 0)
	rep.Interrupted = !finished
	table := stdout
	if f.json {
		table = stderr
		if err := rep.WriteJSON(stdout); err != nil {
			return err
		}
	}
	if err := rep.WriteTable(table); err != nil {
		return err
	}
	if f.html != "" {
		if err := writeFile(f.html, rep.WriteHTML); err != nil {
			return fmt.Errorf("--html: %w", err)
		}
	}
	if !finished {
		fmt.Fprintf(stderr, "eval: %d of %d runs finished so far\n", len(results), s.Size())
		return nil
	}
	if !rep.AllPassed() {
		return codeError{1, nil}
	}
	return nil
}

func runCommand(stdout, stderr io.Writer) *cobra.Command {
	var f submitFlags
	var task Task
	var dir string
	cmd := &cobra.Command{
		Use:   "run --temporal HOST:PORT [flags] PROMPT...",
		Short: "Run one agent job on a Temporal worker and stream its --json events",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.check(); err != nil {
				return err
			}
			if err := f.settings.check(); err != nil {
				return err
			}
			task.Prompt = strings.Join(args, " ")
			task.Settings = f.settings
			ctx := cmd.Context()
			id, err := SubmitJob(ctx, f.Conn, task, dir)
			if err != nil {
				return err
			}
			fmt.Fprintf(stderr, "run: job %s on %s\n", id, f.HostPort)
			blobs, err := OpenBlobs(ctx, f.Blob)
			if err != nil {
				return err
			}
			defer blobs.Close()
			sent := map[int]int{}
			_, results, _, err := Watch(ctx, f.Conn, id, true, func(int, int, int, Result) {}, func() {
				_ = StreamEvents(ctx, blobs, id, sent, stdout)
			})
			if errors.Is(err, context.Canceled) {
				// Ctrl+C is Esc: the job aborts durably.
				_ = Cancel(context.Background(), f.Conn, id)
				fmt.Fprintf(stderr, "run: cancelled job %s\n", id)
				return codeError{1, nil}
			}
			if err != nil {
				return err
			}
			_ = StreamEvents(ctx, blobs, id, sent, stdout)
			if len(results) != 1 {
				return fmt.Errorf("job %s ended without a result", id)
			}
			r := results[0]
			fmt.Fprintf(stderr, "run: %s after %d attempt(s) on %s; session %s, diff %s\n", r.Status, r.Attempts, strings.Join(r.Workers, ", "), r.Session, r.Diff)
			if !r.Passed {
				if r.Reason != "" {
					fmt.Fprintf(stderr, "run: %s\n", r.Reason)
				}
				return codeError{1, nil}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.SetInterspersed(false)
	connFlags(fl, &f.Conn)
	settingsFlags(fl, &f.settings)
	fl.StringVar(&task.Source.Git, "git", "", "clone this repository as the workspace (default: upload --dir)")
	fl.StringVar(&task.Source.Commit, "commit", "", "with --git: the commit to check out")
	fl.StringVar(&dir, "dir", ".", "the workspace to upload (without --git)")
	return cmd
}
