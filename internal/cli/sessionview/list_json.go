package sessionview

import (
	"fmt"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// sessionListJSON is `session list --json`: the rows of the table, typed.
type sessionListJSON struct {
	Directory string            `json:"directory"` // the sessions directory
	Sessions  []sessionListItem `json:"sessions"`  // newest first
}

type sessionListItem struct {
	ID      string `json:"id"`
	Path    string `json:"path"`
	Started string `json:"started"` // RFC 3339, UTC
	Model   string `json:"model,omitzero"`
	// State is idle, open run, open compaction or corrupt.
	State string `json:"state"`
	// Blocked is why a resume here with the default configuration would be
	// blocked; empty when it would not.
	Blocked string `json:"blocked,omitzero"`
	// ContinuationOwed: idle, but the task's continuation run starts at
	// the next resume (a crash between a compaction and that run).
	ContinuationOwed bool   `json:"continuationOwed,omitzero"`
	Corruption       string `json:"corruption,omitzero"` // the corruption code
	Size             int64  `json:"size"`                // bytes
	LastPrompt       string `json:"lastPrompt,omitzero"`
	ForkOf           string `json:"forkOf,omitzero"` // "<source id>@<fact>" for a fork
	// Parent is the session whose task call started this subagent's
	// session, Agent the agent (docs/agents.md).
	Parent string `json:"parent,omitzero"`
	Agent  string `json:"agent,omitzero"`
}

func printSessionListJSON(f *cmdutil.Factory, cwd string, sums []store.Summary, check *listing) error {
	forks := forkColumn(sums)
	out := sessionListJSON{Directory: store.SessionsDir(cwd), Sessions: make([]sessionListItem, 0, len(sums))}
	sums, links := NestSessions(sums)
	for _, s := range sums {
		item := sessionListItem{
			ID:               s.ID,
			Path:             s.Path,
			Started:          s.Started.UTC().Format(time.RFC3339),
			Model:            s.Model,
			State:            jsonState(s, check),
			Blocked:          check.blockedBy(s),
			ContinuationOwed: s.ContinuationOwed,
			Size:             s.Size,
			LastPrompt:       s.LastPrompt,
			ForkOf:           forks[s.ID],
		}
		if s.Corruption != nil {
			item.Corruption = s.Corruption.Code
		}
		if l, ok := links[s.ID]; ok {
			item.Parent, item.Agent = l.Parent, l.Agent
		}
		out.Sessions = append(out.Sessions, item)
	}
	if err := json.MarshalWrite(f.Stdout, out, jsontext.WithIndent("  ")); err != nil {
		return fmt.Errorf("list sessions: %w", err)
	}
	fmt.Fprintln(f.Stdout)
	return nil
}

// jsonState is the state of a listed session, "rewind in progress" while
// another process rewinds it.
func jsonState(s store.Summary, check *listing) string {
	if check.rewinding[s.ID] {
		return "rewind in progress"
	}
	return string(s.State)
}
