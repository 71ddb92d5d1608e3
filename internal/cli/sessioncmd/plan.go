package sessioncmd

import (
	"fmt"
	"os"

	"github.com/go-json-experiment/json"
	"github.com/spf13/cobra"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/recovery"
	"github.com/tiny-agent/tiny-go/internal/session"
)

func NewPlanCommand(a *cmdutil.Factory) *cobra.Command {
	var currentPath string
	cmd := &cobra.Command{
		Use:   "plan <id|file> --current <current.json>",
		Short: "Print the recovery plan of a session as JSON",
		Long: `Print the next recovery step for a session file, given the configuration the
process would resume with (a JSON object in the shape of
current-configuration.schema.json), as one JSON object in the shape of
recovery-plan.schema.json.

Exit status 0 when a plan was printed (a "blocked" plan included), 1 when the
session is corrupt, 2 when the file or the configuration cannot be used.`,
		Args: cmdutil.ExactArgs(1, "a session id or file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if currentPath == "" {
				return cmdutil.UsageErrorf("%s needs --current <current.json>", cmd.CommandPath())
			}
			f, err := Open(a, args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			raw, err := os.ReadFile(currentPath)
			if err != nil {
				return cmdutil.UsageError{Err: PathError(currentPath, err)}
			}
			current, err := recovery.DecodeCurrent(raw)
			if err != nil {
				return cmdutil.UsageErrorf("%s: %v", currentPath, err)
			}
			st, c, err := reduceSession(f, args[0])
			if err != nil {
				return err
			}
			if c != nil {
				return fmt.Errorf("%s", corruptLine(args[0], c))
			}
			out, err := json.Marshal(recovery.Plan(st, current))
			if err != nil {
				return fmt.Errorf("print plan: %w", err)
			}
			fmt.Fprintf(a.Stdout, "%s\n", out)
			return nil
		},
	}
	cmd.Flags().StringVar(&currentPath, "current", "", "the current configuration (JSON file)")
	return cmd
}

// corruptLine names a corruption of the file at path in one line.
func corruptLine(path string, c *session.Corruption) string {
	return path + " is corrupt: " + c.Describe()
}
