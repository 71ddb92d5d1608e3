package sessioncmd

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/store"
)

func NewRepairCommand(a *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "repair <id|file>",
		Short: "Cut a damaged session back to its last verified commit",
		Long: `Cut a session back to its last verified commit: the longest prefix that
tiny-go's integrity records (<session>.d/integrity) vouch for and that is
a valid session. Lines another program changed or appended, and anything
after them, are removed; the removed bytes are kept in
<session>.d/repair-<time>.cut. A session whose end was cut off cannot be
repaired: the lost lines are gone.

Exit status 0 when repaired or nothing needed repair, 1 when it cannot be
repaired.`,
		Args: cmdutil.ExactArgs(1, "a session id or file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := Path(a, args[0])
			if err != nil {
				return err
			}
			r, err := store.RepairFile(path, time.Now())
			if errors.Is(err, store.ErrNothingToRepair) {
				fmt.Fprintf(a.Stdout, "%s: nothing to repair (the session verifies)\n", path)
				return nil
			}
			if err != nil {
				fmt.Fprintf(a.Stderr, "%s: %v\n", cmdutil.ProgramName, err)
				return cmdutil.ExitError{Code: cmdutil.ExitFailed}
			}
			fmt.Fprintf(a.Stdout, "%s: %s\n", path, r.Why)
			if r.Removed > 0 {
				fmt.Fprintf(a.Stdout, "removed lines %d-%d (%d bytes), kept in %s\n", r.FirstLine, r.LastLine, r.Removed, r.Backup)
			}
			fmt.Fprintf(a.Stdout, "kept the first %d bytes (lines 1-%d), which verify\n", r.Kept, r.FirstLine-1)
			return nil
		},
	}
}
