// Package cli is the tiny-go command line. Main is the whole program: it
// parses the arguments, runs the command and returns the exit code, so
// tests run it in-process or through testscript exactly as the binary does.
//
// Exit codes (cli.md): 0 success; 1 the operation failed, was aborted, or
// found a corrupt session; 2 usage error (unknown flag or command, wrong
// number of arguments, a path or input file that cannot be used). Errors
// are one line on stderr, never a stack trace.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/tiny-agent/tiny-go/internal/cli/acpcmd"
	"github.com/tiny-agent/tiny-go/internal/cli/assemble"
	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/cli/evalcmd"
	"github.com/tiny-agent/tiny-go/internal/cli/fleetcmd"
	"github.com/tiny-agent/tiny-go/internal/cli/headlesscmd"
	"github.com/tiny-agent/tiny-go/internal/cli/lspcmd"
	"github.com/tiny-agent/tiny-go/internal/cli/mcpcmd"
)

// Exit codes.
const (
	exitOK      = cmdutil.ExitOK
	exitFailed  = cmdutil.ExitFailed
	exitUsage   = cmdutil.ExitUsage
	programName = cmdutil.ProgramName
)

// Main runs tiny-go with args (without the program name) and returns the
// exit code. env looks up environment variables (os.Getenv in the binary).
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer, env func(string) string) int {
	return mainWithHooks(args, stdin, stdout, stderr, env, nil)
}

// mainWithHooks is Main with test seams for the run command.
func mainWithHooks(args []string, stdin io.Reader, stdout, stderr io.Writer, env func(string) string, hooks *assemble.TestHooks) (code int) {
	// A bug must still end in one clear line, not a stack trace. The
	// session needs no cleanup: every committed fact is already durable.
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "%s: internal error: %v\n", cmdutil.ProgramName, r)
			code = cmdutil.ExitFailed
		}
	}()
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, getenv: env, hooks: hooks}
	root := newRootCommand(a)
	root.SetArgs(claudeArgs(root, args))
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	return a.exitCode(root.Execute())
}

// app is what every command shares: the standard streams, the environment
// and the global flags.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string

	cwd string // --cwd

	// hooks are test seams of the run command (nil in production).
	hooks *assemble.TestHooks
}

// factory is what a command package is handed (cmdutil.Factory).
func (a *app) factory() *cmdutil.Factory {
	return &cmdutil.Factory{Stdin: a.stdin, Stdout: a.stdout, Stderr: a.stderr, Getenv: a.getenv, WorkDir: a.workDir, Cwd: func() string { return a.cwd }, Now: time.Now,
		Config: a.config}
}

// config is the configuration in effect for cmd (cmdutil.Config).
func (a *app) config(cmd *cobra.Command) (cmdutil.Config, error) {
	io, cwd, err := a.settingsHere(cmd)
	if err != nil {
		return cmdutil.Config{}, err
	}
	return cmdutil.Config{Cwd: cwd, Getenv: io.Getenv, Settings: io.Settings}, nil
}

// group makes cmd a group: run alone it names its commands (runGroup).
func group(a *app, cmd *cobra.Command) *cobra.Command {
	cmd.RunE = runGroup(a)
	return cmd
}

// stdio is the process's standard streams and environment.
func (a *app) stdio() assemble.Stdio {
	return assemble.Stdio{Stdin: a.stdin, Stdout: a.stdout, Stderr: a.stderr, Getenv: a.getenv}
}

// workDir is --cwd made absolute, or the process's working directory.
func (a *app) workDir() (string, error) {
	if a.cwd == "" {
		return os.Getwd()
	}
	abs, err := filepath.Abs(a.cwd)
	if err != nil {
		return "", cmdutil.UsageErrorf("--cwd %s: %v", a.cwd, err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return "", cmdutil.UsageErrorf("--cwd %s is not a directory", a.cwd)
	}
	return abs, nil
}

func newRootCommand(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   cmdutil.ProgramName + " [flags] [prompt...]",
		Short: "A durable coding agent",
		Long: cmdutil.ProgramName + ` is a coding agent whose session file makes every crash resumable.
Without a prompt it is interactive; with one it runs it and exits.`,
		Version:       cmdutil.Version,
		SilenceErrors: true,
		SilenceUsage:  true,
		// A command that is not a subcommand is the start of a prompt.
		Args: cobra.ArbitraryArgs,
	}
	root.PersistentFlags().StringVar(&a.cwd, "cwd", "", "working directory (default: the current directory)")
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(newSessionCommand(a))
	root.AddCommand(group(a, mcpcmd.NewCommand(a.factory())))
	root.AddCommand(evalcmd.NewCommand(a.factory()))
	root.AddCommand(newConfigCommand(a))
	root.AddCommand(acpcmd.NewCommand(a.factory()))
	root.AddCommand(group(a, lspcmd.NewCommand(a.factory())))
	configureRun(a, root)
	configureManners(a, root)
	fleetcmd.Configure(a.factory(), root)
	headlesscmd.AddFlags(root.Flags()) // last: see headless.go
	headlesscmd.AddIgnoredSDKFlags(root.Flags())
	return root
}

func (a *app) exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ee cmdutil.ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	fmt.Fprintf(a.stderr, "%s: %v\n", cmdutil.ProgramName, cmdutil.OneLine(err.Error()))
	var ue cmdutil.UsageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		return exitUsage
	}
	return cmdutil.ExitFailed
}

// isCobraUsage recognizes the argument errors cobra makes itself.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, prefix := range []string{"unknown command", "unknown flag", "unknown shorthand", "accepts ", "requires ", "invalid argument"} {
		if len(msg) >= len(prefix) && msg[:len(prefix)] == prefix {
			return true
		}
	}
	return false
}
