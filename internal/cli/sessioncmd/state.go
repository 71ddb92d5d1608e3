package sessioncmd

import (
	"bufio"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/session"
)

func NewStateCommand(a *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "state <id|file>",
		Short: "Print the reduced state of a session as JSON",
		Long: `Print the reduced state of a session (an id of the working directory, or a
file) as one JSON object in the shape of
expected-state.schema.json: {"ok":true,"state":{...}} or
{"ok":false,"error":{"code":...,"line":...}}.

Exit status 0 when the session is valid, 1 when it is corrupt. The file is
only read: a torn tail is reported through repairedLength, never cut.`,
		Args: cmdutil.ExactArgs(1, "a session id or file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := Open(a, args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			st, c, err := reduceSession(f, args[0])
			if err != nil {
				return err
			}
			// Written as it is marshaled: the transcript is not built
			// a second time in memory.
			w := bufio.NewWriterSize(a.Stdout, 64<<10)
			err = session.WriteResult(w, st, c)
			if err == nil {
				err = w.WriteByte('\n')
			}
			if err == nil {
				err = w.Flush()
			}
			if err != nil {
				return fmt.Errorf("print state of %s: %w", args[0], err)
			}
			if c != nil {
				return cmdutil.ExitError{Code: cmdutil.ExitFailed}
			}
			return nil
		},
	}
}
