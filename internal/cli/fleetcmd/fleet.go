// Package fleetcmd is tiny-go's fleet commands: `worker`, `eval
// --temporal`, `eval status` and `run --temporal`, handed to the
// tiny-go-fleet program.
package fleetcmd

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/procs"
	"github.com/tiny-agent/tiny-go/internal/secrets"
)

// fleetProgram runs `worker`, `eval --temporal` and `run --temporal`. It
// is a separate executable because the Temporal SDK links gRPC and
// protobuf, whose init would slow every start of tiny-go
// (cmd/tiny-go/linked_test.go, docs/fleet.md).
const fleetProgram = "tiny-go-fleet"

// Configure registers the fleet's commands and flags on root, after the
// root's run and the eval command are in place; they hand the command line
// to tiny-go-fleet.
func Configure(f *cmdutil.Factory, root *cobra.Command) {
	a := fleet{f}
	root.AddCommand(&cobra.Command{
		Use:   "worker --temporal HOST:PORT [flags]",
		Short: "Run agent tasks from a Temporal task queue (docs/fleet.md)",
		Long: `Run agent tasks from a Temporal task queue (docs/fleet.md). tiny-go-fleet's
flags: --namespace NS, --task-queue Q, --concurrency N, --blob URL.`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runFleetOrHelp(cmd, append([]string{"worker"}, args...))
		},
	})

	// `run --temporal …` is a prompt to tiny-go's root unless --temporal
	// follows the word run.
	local := root.RunE
	root.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) > 1 && args[0] == "run" && (args[1] == "--temporal" || strings.HasPrefix(args[1], "--temporal=")) {
			return a.runFleet(args)
		}
		return local(cmd, args)
	}

	for _, cmd := range root.Commands() {
		if cmd.Name() != "eval" {
			continue
		}
		configureFleetEval(a, cmd)
	}
}

// configureFleetEval adds --temporal and the fleet's flags to eval, and
// `eval status`.
func configureFleetEval(a fleet, cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.String("temporal", "", "run the suite on Temporal workers at HOST:PORT (docs/fleet.md)")
	fleetFlags := pflag.NewFlagSet("fleet", pflag.ContinueOnError)
	fleetFlags.String("namespace", "", "with --temporal: the Temporal namespace")
	fleetFlags.String("task-queue", "", "with --temporal: the task queue of the workers")
	fleetFlags.Bool("tls", false, "with --temporal: dial Temporal with TLS")
	fleetFlags.String("tls-cert", "", "with --temporal: client certificate for mTLS")
	fleetFlags.String("tls-key", "", "with --temporal: its private key")
	fleetFlags.String("blob", "", "with --temporal: the blob store URL (file://, s3://, gs://)")
	fleetFlags.String("endpoint", "", "with --temporal: the model endpoint the workers use")
	fleetFlags.String("sandbox", "", "with --temporal: tiny-go --sandbox value for the agent")
	fleetFlags.Bool("detach", false, "with --temporal: print the suite's id and exit")
	fleetFlags.Int64("max-tokens", 0, "with --temporal: token budget per task")
	fleetFlags.Float64("max-cost", 0, "with --temporal: budget per task in US dollars")
	fleetFlags.Duration("heartbeat-timeout", 0, "with --temporal: how long a silent worker keeps its task")
	fleetFlags.Int("max-attempts", 0, "with --temporal: attempts per task")
	fl.AddFlagSet(fleetFlags)
	local := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if !cmd.Flags().Changed("temporal") {
			var set []string
			fleetFlags.VisitAll(func(f *pflag.Flag) {
				if cmd.Flags().Changed(f.Name) {
					set = append(set, "--"+f.Name)
				}
			})
			if len(set) > 0 {
				return cmdutil.UsageErrorf("%s needs --temporal", strings.Join(set, ", "))
			}
			return local(cmd, args)
		}
		fwd := []string{"eval"}
		var bad []string
		cmd.Flags().Visit(func(f *pflag.Flag) {
			switch f.Name {
			case "parallel", "record", "replay", "keep", "work-dir":
				bad = append(bad, "--"+f.Name)
			case "cwd":
			default:
				fwd = append(fwd, "--"+f.Name+"="+f.Value.String())
			}
		})
		if len(bad) > 0 {
			return cmdutil.UsageErrorf("%s cannot be used with --temporal (the workers' --concurrency sets the parallelism)", strings.Join(bad, ", "))
		}
		return a.runFleet(append(fwd, args...))
	}
	cmd.AddCommand(&cobra.Command{
		Use:                "status WORKFLOW-ID --temporal HOST:PORT [--wait] [--json] [--html FILE]",
		Short:              "Show a Temporal eval suite's results so far; --wait follows it to the end",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runFleetOrHelp(cmd, append([]string{"eval", "status"}, args...))
		},
	})
}

// fleet runs the fleet's commands with the process's streams.
type fleet struct{ *cmdutil.Factory }

// fleetInstallHint says how to install tiny-go-fleet, as the README does.
const fleetInstallHint = "go install ./cmd/tiny-go-fleet in a clone of tiny-go (docs/fleet.md)"

// runFleetOrHelp is runFleet, except that --help prints tiny-go's help of
// cmd when tiny-go-fleet is missing: help must print on every install.
func (a fleet) runFleetOrHelp(cmd *cobra.Command, args []string) error {
	if _, err := fleetExecutable(); err != nil && slices.ContainsFunc(args, isHelpFlag) {
		if err := cmd.Help(); err != nil {
			return err
		}
		_, err := fmt.Fprintf(cmd.OutOrStdout(), "\n%s is not installed; to run this command:\n  %s\n", fleetProgram, fleetInstallHint)
		return err
	}
	return a.runFleet(args)
}

// isHelpFlag reports whether s asks for help.
func isHelpFlag(s string) bool { return s == "--help" || s == "-h" }

// runFleet hands the command line to tiny-go-fleet. The program that
// runs tiny-go becomes tiny-go-fleet in place (execve: the same pid), so a
// supervisor's SIGTERM or SIGKILL of `tiny-go worker` reaches the worker
// itself and no second process can be orphaned. Only an in-process caller
// whose standard streams are not this process's own (a test) gets a child
// instead: one that dies with it and is sent the signals it gets.
func (a fleet) runFleet(args []string) error {
	exe, err := fleetExecutable()
	if err != nil {
		return err
	}
	env := a.fleetEnv()
	if a.Stdin == os.Stdin && a.Stdout == os.Stdout && a.Stderr == os.Stderr {
		if cwd := a.Cwd(); cwd != "" {
			if err := os.Chdir(cwd); err != nil {
				return fmt.Errorf("--cwd: %w", err)
			}
		}
		err := syscall.Exec(exe, append([]string{exe}, args...), env)
		return fmt.Errorf("%s: %w", fleetProgram, err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.Env, cmd.Dir = a.Stdin, a.Stdout, a.Stderr, env, a.Cwd()
	cmd.SysProcAttr = procs.DiesWithUs(&syscall.SysProcAttr{})
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", fleetProgram, err)
	}
	// The terminal's Ctrl+C reaches it directly (the same process group);
	// it decides. The signals a supervisor sends this pid are passed on.
	signal.Ignore(syscall.SIGINT)
	defer signal.Reset(syscall.SIGINT)
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case sig := <-sigs:
			_ = cmd.Process.Signal(sig)
			continue
		case err = <-done:
		}
		break
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return cmdutil.ExitError{Code: max(ee.ExitCode(), cmdutil.ExitFailed)}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", fleetProgram, err)
	}
	return nil
}

// fleetEnv is the process's environment with the model keys tiny-go took
// out of it at start put back: the fleet's workers hand them to the agents
// they run (docs/fleet.md: credentials come from the workers'
// environment).
func (a fleet) fleetEnv() []string {
	env := os.Environ()
	for _, name := range secrets.Names(a.Getenv) {
		if _, set := os.LookupEnv(name); set {
			continue
		}
		if v := a.Getenv(name); v != "" {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// fleetExecutable is tiny-go-fleet beside this executable, else on $PATH.
func fleetExecutable() (string, error) {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), fleetProgram)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(fleetProgram); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s is not installed beside tiny-go or on $PATH: %s", fleetProgram, fleetInstallHint)
}
