package cli

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/tiny-agent/tiny-go/internal/session"
)

func newSessionListCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the sessions of the working directory, newest first",
		Long: `List the sessions of the working directory (--cwd), newest first: id, start
time, model, state (idle, open run, open compaction, corrupt), size and the
last prompt.`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cwd, err := a.workDir()
			if err != nil {
				return err
			}
			sums, err := session.List(cwd)
			if err != nil {
				return fmt.Errorf("list sessions: %w", err)
			}
			if len(sums) == 0 {
				fmt.Fprintf(a.stdout, "no sessions in %s\n", session.SessionsDir(cwd))
				return nil
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSTARTED\tMODEL\tSTATE\tSIZE\tLAST PROMPT")
			for _, s := range sums {
				state := string(s.State)
				if s.Corruption != nil {
					state += " (" + s.Corruption.Code + ")"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n",
					s.ID, s.Started.UTC().Format(time.DateTime), dash(s.Model), state, formatSize(s.Size), dash(s.LastPrompt))
			}
			return tw.Flush()
		},
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// formatSize is a byte count for people: 512 B, 1.4 KiB, 3.0 MiB.
func formatSize(n int64) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1024*1024))
}
