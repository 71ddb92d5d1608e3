package cli

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/recovery"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

func newSessionListCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the sessions of the working directory, newest first",
		Long: `List the sessions of the working directory (--cwd), newest first: id, start
time, model, state (idle, open run, open compaction, blocked (reason) when a
resume here with the default configuration would be blocked, corrupt), size
and the last prompt.`,
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
				if reason := blockedReason(cwd, a.getenv, s); reason != "" {
					state = "blocked (" + reason + ")"
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

// blockedReason tells whether an open session would be blocked if resumed
// here with the default configuration (all built-in tools, no MCP, the
// session's model unless TINY_MODEL is set): the planner's reason, or "".
func blockedReason(cwd string, getenv func(string) string, s session.Summary) string {
	if s.Open == nil {
		return ""
	}
	envID, err := session.EnvironmentIdentity(cwd, getenv)
	if err != nil {
		return ""
	}
	bg, err := tools.NewManager(cwd)
	if err != nil {
		return ""
	}
	builtins, err := tools.Builtins(tools.Config{WorkDir: cwd, Background: bg})
	if err != nil {
		return ""
	}
	names := make([]string, len(builtins))
	for i, t := range builtins {
		names[i] = t.Definition().Name
	}
	system, _, err := systemPrompt(cwd, names, nil)
	if err != nil {
		return ""
	}
	model := firstNonEmpty(getenv("TINY_MODEL"), s.Open.Header.Model)
	current, err := agent.CurrentConfiguration(model, system, envID, builtins)
	if err != nil {
		return ""
	}
	if b, ok := recovery.Plan(s.Open, current).(recovery.Blocked); ok {
		return string(b.Reason)
	}
	return ""
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
