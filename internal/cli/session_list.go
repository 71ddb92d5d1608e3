package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/cli/rewindcmd"
	"github.com/tiny-agent/tiny-go/internal/recovery"
	"github.com/tiny-agent/tiny-go/internal/store"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

func newSessionListCommand(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the sessions of the working directory, newest first",
		Long: `List the sessions of the working directory (--cwd), newest first: id, start
time, model, state (idle, open run, open compaction, blocked (reason) when a
resume here with the default configuration would be blocked, corrupt), size
and the last prompt. --json prints one JSON object instead.`,
		Example: `  tiny-go session list
  tiny-go session list --json | jq -r '.sessions[0].id'`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cwd, err := a.workDir()
			if err != nil {
				return err
			}
			sums, err := store.List(cwd)
			if err != nil {
				return fmt.Errorf("list sessions: %w", err)
			}
			// Interrupted rewinds are finished first (a tree half at one
			// turn and half at another is no state to list).
			rewinding, finished, err := rewindcmd.FinishAllPending(cmd.Context(), sums, a.getenv, a.stderr)
			if err != nil {
				return err
			}
			if finished {
				if sums, err = store.List(cwd); err != nil {
					return fmt.Errorf("list sessions: %w", err)
				}
			}
			check := &resumeCheck{cwd: cwd, getenv: a.getenv, rewinding: rewinding}
			if asJSON {
				return printSessionListJSON(a, cwd, sums, check)
			}
			if len(sums) == 0 {
				fmt.Fprintf(a.stdout, "no sessions in %s\n", store.SessionsDir(cwd))
				return nil
			}
			return writeSessionTable(a.stdout, sums, check)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}

// writeSessionTable is the table of `session list`: ids as short as they
// stay unique (any unique prefix is accepted where an id is), and cells
// shortened so that it fits tableWidth columns.
func writeSessionTable(w io.Writer, sums []store.Summary, check *resumeCheck) error {
	ids := make([]string, len(sums))
	for i, s := range sums {
		ids[i] = s.ID
	}
	short := abbreviateIDs(ids)
	forks := forkColumn(sums)
	for id, origin := range forks {
		if src, at, ok := strings.Cut(origin, "@"); ok && short[src] != "" {
			forks[id] = short[src] + "@" + at
		}
	}
	rows := [][]string{strings.Split("ID\tSTARTED\tMODEL\tSTATE\tSIZE\tLAST PROMPT"+forks.header(), "\t")}
	idWidth := 0
	bare := map[int]string{} // a subagent's row without its description
	sums, links := nestSessions(sums)
	for _, s := range sums {
		id := short[s.ID]
		if l, ok := links[s.ID]; ok {
			// A subagent's row is under its parent's: it names the agent
			// and the task; the task's description gives way first.
			id = "└ " + id + " (" + l.Agent + ")"
			idWidth = max(idWidth, utf8.RuneCountInString(id))
			bare[len(rows)] = id
			if l.Description != "" {
				id = strings.TrimSuffix(id, ")") + ": " + l.Description + ")"
			}
		}
		idWidth = max(idWidth, len(short[s.ID]))
		state := summaryState(s)
		if s.Corruption != nil {
			state += " (" + s.Corruption.Code + ")"
		}
		if reason := check.blocked(s); reason != "" {
			state = "blocked (" + reason + ")"
		}
		if check.rewinding[s.ID] {
			state = "rewind in progress"
		}
		row := []string{id, s.Started.UTC().Format(time.DateTime), dash(s.Model), state, formatSize(s.Size), dash(s.LastPrompt)}
		if len(forks) > 0 {
			row = append(row, dash(forks[s.ID]))
		}
		rows = append(rows, row)
	}
	// The prompt gives way first, then a subagent's description and the
	// model; the state and the fork origin (an id and a seq, useless cut)
	// are never cut.
	fitTable(rows, tableWidth, []fitColumn{{5, 20}, {0, idWidth}, {2, 12}})
	for i, b := range bare {
		// A description cut to a few letters says nothing.
		if strings.HasSuffix(rows[i][0], "…") && utf8.RuneCountInString(rows[i][0]) < utf8.RuneCountInString(b)+8 {
			rows[i][0] = b
		}
	}
	tw := tabwriter.NewWriter(w, 0, 4, tableGap, ' ', 0)
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// summaryState is the state column: "idle (continuation owed)" tells a
// session whose task goes on at the next resume from one that is done.
func summaryState(s store.Summary) string {
	if s.ContinuationOwed {
		return string(s.State) + " (continuation owed)"
	}
	return string(s.State)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// resumeCheck tells whether an open session would be blocked if resumed
// here with the default configuration (all built-in tools, no MCP, the
// model a resume would pick). The tools and the system
// prompt are built once per listing, on the first open session.
type resumeCheck struct {
	cwd    string
	getenv func(string) string
	// rewinding are the sessions a rewind in another process is changing.
	rewinding map[string]bool

	ready  bool
	failed bool
	envID  string
	tools  []tools.Tool
	system string
}

func (c *resumeCheck) init() bool {
	if c.ready {
		return !c.failed
	}
	c.ready, c.failed = true, true
	envID, err := store.EnvironmentIdentity(c.cwd, c.getenv)
	if err != nil {
		return false
	}
	bg, err := tools.NewManager(c.cwd)
	if err != nil {
		return false
	}
	builtins, err := tools.Builtins(tools.Config{WorkDir: c.cwd, Background: bg})
	if err != nil {
		return false
	}
	builtins = append(builtins, defaultLSPTools(c.getenv)...)
	builtins = append(builtins, defaultWebFetchTools()...)
	// As a run with the default --agent-tools offers them.
	builtins = append(builtins, agentToolsFor(c.cwd)...)
	names := make([]string, len(builtins))
	for i, t := range builtins {
		names[i] = t.Definition().Name
	}
	system, _, _, err := systemPrompt(c.cwd, c.getenv("HOME"), names, nil)
	if err != nil {
		return false
	}
	c.envID, c.tools, c.system, c.failed = envID, builtins, system, false
	return true
}

// blocked returns the planner's reason, or "" when s is not open or would
// resume.
func (c *resumeCheck) blocked(s store.Summary) string {
	if s.Open == nil || !c.init() {
		return ""
	}
	model := resumeModel(s.Open, strings.TrimSpace(c.getenv("TINY_MODEL")))
	current, err := agent.CurrentConfiguration(identityFromEnv(c.getenv), model, c.system, c.envID, c.tools)
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
