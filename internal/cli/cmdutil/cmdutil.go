// Package cmdutil is what the command packages under internal/cli share:
// the Factory that hands a command its streams, environment, working
// directory and clock, and the errors that set tiny-go's exit code.
package cmdutil

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/tiny-agent/tiny-go/internal/config"
)

// Exit codes (docs/cli.md): 0 success; 1 the operation failed, was
// aborted, or found a corrupt session; 2 usage error.
const (
	ExitOK      = 0
	ExitFailed  = 1
	ExitUsage   = 2
	ProgramName = "tiny-go"
)

// Factory hands every command what it needs from the process: a command
// package takes one, never the process's globals, so its tests run it
// in-process.
type Factory struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Getenv looks up an environment variable (os.Getenv in the binary).
	Getenv func(string) string
	// WorkDir is --cwd made absolute, or the process's working directory;
	// known only once the flags are parsed, so it is a function.
	WorkDir func() (string, error)
	// Cwd is --cwd as given ("" without it), for a command that hands it
	// on unresolved.
	Cwd func() string
	// Now is the clock.
	Now func() time.Time
	// Config is the configuration a command of cmd works with: the
	// working directory, the settings files merged with the environment
	// and cmd's setting flags.
	Config func(cmd *cobra.Command) (Config, error)
}

// Config is the configuration in effect for a command.
type Config struct {
	Cwd string
	// Getenv is the environment with the settings files' values standing
	// in for unset variables.
	Getenv   func(string) string
	Settings *config.Settings
}

// OneLine keeps an error message on one line.
func OneLine(s string) string {
	out := []rune(s)
	for i, r := range out {
		if r == '\n' || r == '\r' {
			out[i] = ' '
		}
	}
	return string(out)
}

// UsageError is a mistake in how tiny-go was invoked: exit code 2.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// UsageErrorf is a UsageError with a formatted message.
func UsageErrorf(format string, args ...any) error {
	return UsageError{fmt.Errorf(format, args...)}
}

// ExitError ends the program with Code after the command has already
// reported what happened (e.g. printed a corrupt state).
type ExitError struct{ Code int }

func (e ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// ExactArgs is cobra.ExactArgs with a usage error that names what is
// missing.
func ExactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return UsageErrorf("%s needs %s (see '%s --help')", cmd.CommandPath(), what, cmd.CommandPath())
		}
		return nil
	}
}
