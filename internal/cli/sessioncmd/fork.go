package sessioncmd

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/fork"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// newSessionForkCommand is `tiny-go session fork <id> [--at <seq>]`.
func NewForkCommand(a *cmdutil.Factory) *cobra.Command {
	var at int64
	cmd := &cobra.Command{
		Use:   "fork <id>",
		Short: "Start a new session from a prefix of another one",
		Long: `Write a new session whose facts are the source's, byte for byte, up to seq
--at (default: all of them), under a new id. The source is only read. A seq
must end a transaction; a fork inside an open operation is recovered like any
open session when it is resumed. Where the fork came from is recorded beside
it (session list and session show say so), and it keeps the source's
checkpoints of the turns they share, so it can rewind them too.`,
		Args: cmdutil.ExactArgs(1, "a session id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cwd, err := a.WorkDir()
			if err != nil {
				return err
			}
			if args[0], err = ExpandID(cwd, args[0]); err != nil {
				return err
			}
			if !store.ValidID(args[0]) {
				return NoSession(args[0], cwd)
			}
			path, err := Path(a, args[0])
			if err != nil {
				return err
			}
			if !cmd.Flags().Changed("at") {
				at = -1
			} else if at < 0 {
				return cmdutil.UsageErrorf("--at must be a seq (0 keeps only the header)")
			}
			res, err := fork.Write(path, at, "", 0, time.Now())
			if err != nil {
				return err
			}
			o, _ := fork.ReadOrigin(res.Path)
			point := "its end"
			if o != nil {
				point = fmt.Sprintf("seq %d", o.At)
			}
			fmt.Fprintf(a.Stdout, "Forked session %s at %s into %s.\nContinue it with: tiny-go --session %s\n", args[0], point, res.ID, res.ID)
			return nil
		},
	}
	cmd.Flags().Int64Var(&at, "at", 0, "the last seq the fork keeps (default: every committed fact)")
	return cmd
}
