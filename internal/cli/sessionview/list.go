// Package sessionview is what people read of sessions: `tiny-go session
// list` and `session show`, and the order of a listing (subagents under
// their parents) that the resume picker shares.
package sessionview

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/cli/rewindcmd"
	"github.com/tiny-agent/tiny-go/internal/cli/sessioncmd"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// NewListCommand is `tiny-go session list`; blocked says which open
// sessions a resume here would block.
func NewListCommand(f *cmdutil.Factory, blocked BlockedCheck) *cobra.Command {
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
		Args: cmdutil.ExactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			cwd, err := f.WorkDir()
			if err != nil {
				return err
			}
			sums, err := store.List(cwd)
			if err != nil {
				return fmt.Errorf("list sessions: %w", err)
			}
			// Interrupted rewinds are finished first (a tree half at one
			// turn and half at another is no state to list).
			rewinding, finished, err := rewindcmd.FinishAllPending(cmd.Context(), sums, f.Getenv, f.Stderr)
			if err != nil {
				return err
			}
			if finished {
				if sums, err = store.List(cwd); err != nil {
					return fmt.Errorf("list sessions: %w", err)
				}
			}
			check := &listing{blocked: blocked(cwd, f.Getenv), rewinding: rewinding}
			if asJSON {
				return printSessionListJSON(f, cwd, sums, check)
			}
			if len(sums) == 0 {
				fmt.Fprintf(f.Stdout, "no sessions in %s\n", store.SessionsDir(cwd))
				return nil
			}
			return writeSessionTable(f.Stdout, sums, check)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}

// writeSessionTable is the table of `session list`: ids as short as they
// stay unique (any unique prefix is accepted where an id is), and cells
// shortened so that it fits tableWidth columns.
func writeSessionTable(w io.Writer, sums []store.Summary, check *listing) error {
	ids := make([]string, len(sums))
	for i, s := range sums {
		ids[i] = s.ID
	}
	short := sessioncmd.AbbreviateIDs(ids)
	forks := forkColumn(sums)
	for id, origin := range forks {
		if src, at, ok := strings.Cut(origin, "@"); ok && short[src] != "" {
			forks[id] = short[src] + "@" + at
		}
	}
	rows := [][]string{strings.Split("ID\tSTARTED\tMODEL\tSTATE\tSIZE\tLAST PROMPT"+forks.header(), "\t")}
	idWidth := 0
	bare := map[int]string{} // a subagent's row without its description
	sums, links := NestSessions(sums)
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
		state := SummaryState(s)
		if s.Corruption != nil {
			state += " (" + s.Corruption.Code + ")"
		}
		if reason := check.blockedBy(s); reason != "" {
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

// SummaryState is the state column: "idle (continuation owed)" tells a
// session whose task goes on at the next resume from one that is done.
func SummaryState(s store.Summary) string {
	if s.ContinuationOwed {
		return string(s.State) + " (continuation owed)"
	}
	return string(s.State)
}

// BlockedCheck makes, for one listing of the sessions of cwd, the check
// that tells why a resume of a listed open session here with the default
// configuration would be blocked ("" when it would not).
type BlockedCheck func(cwd string, getenv func(string) string) func(store.Summary) string

// listing is what a listing says of sessions beyond their summaries.
type listing struct {
	blocked func(store.Summary) string // nil: none is blocked
	// rewinding are the sessions a rewind in another process is changing.
	rewinding map[string]bool
}

// blockedBy is the reason a resume of s would be blocked, or "".
func (l *listing) blockedBy(s store.Summary) string {
	if l.blocked == nil {
		return ""
	}
	return l.blocked(s)
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
