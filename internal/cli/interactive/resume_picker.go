package interactive

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/tiny-agent/tiny-go/internal/cli/assemble"
	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/cli/rewindcmd"
	"github.com/tiny-agent/tiny-go/internal/cli/sessioncmd"
	"github.com/tiny-agent/tiny-go/internal/cli/sessionview"
	"github.com/tiny-agent/tiny-go/internal/cli/subagents"
	"github.com/tiny-agent/tiny-go/internal/fork"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/store"
	"github.com/tiny-agent/tiny-go/internal/ui"
)

// pickSession resolves --resume into a session id: the user picks one of
// cwd's sessions, newest first. ok is false when the user left the
// picker without choosing.
func PickSession(ctx context.Context, io assemble.Stdio, cwd string, f assemble.Flags, prompt string) (id string, ok bool, err error) {
	switch {
	case f.Session != "" || f.Cont:
		return "", false, cmdutil.UsageErrorf("--resume cannot be used with --session or --continue.")
	case prompt != "" || f.JSON:
		return "", false, cmdutil.UsageErrorf("--resume opens interactive mode: give the prompt after choosing, or use --session <id> with a prompt.")
	case !ui.IsTerminal(io.Stdin, io.Stdout):
		return "", false, cmdutil.UsageErrorf("--resume needs a terminal; list the sessions with `tiny-go session list` and resume one with --session <id>.")
	}
	list, err := store.List(cwd)
	if err != nil {
		return "", false, fmt.Errorf("--resume: %w", err)
	}
	var choices []ui.SessionChoice
	list, links := sessionview.NestSessions(list)
	for _, s := range list {
		if s.State == store.SummaryCorrupt {
			continue
		}
		origin := ForkLabel(s.Path)
		if l, ok := links[s.ID]; ok {
			origin = "└ " + subagents.ChildLabel(l)
		}
		choices = append(choices, ui.SessionChoice{ID: s.ID, FirstPrompt: s.FirstPrompt, LastPrompt: s.LastPrompt, State: sessionview.SummaryState(s), Started: s.Started, Origin: origin})
	}
	if len(choices) == 0 {
		return "", false, fmt.Errorf("--resume: no session in %s to resume", cwd)
	}
	id, err = ui.PickSession(ctx, io.Stdin, io.Stdout, choices)
	if errors.Is(err, ui.ErrNoChoice) {
		return "", false, nil
	}
	return id, err == nil, err
}

// recap is the transcript a resumed session shows its last turns of.
func (a *runner) recap() []session.Message {
	if !a.Resumed || a.Store == nil {
		return nil
	}
	return assemble.WithoutReminders(RecapOf(a.Store.State()))
}

// recapOf is what a resumed session shows the last turns of: its
// transcript, or once the store released the answers of compacted turns,
// the active context (the summary, then the turns since).
func RecapOf(st *session.State) []session.Message {
	if st.Released > 0 {
		return st.ActiveContext
	}
	return st.Transcript
}

// forkLabel is "fork of <short id> at turn N" for a fork, so that it can
// be told from its source in the picker; empty for other sessions. N is
// the turn the fork went back to (a conversation rewind), else the last
// turn its prefix holds.
func ForkLabel(path string) string {
	o, err := fork.ReadOrigin(path)
	if err != nil || o == nil {
		return ""
	}
	short := o.Source
	if len(short) > 8 {
		short = short[:8]
	}
	n := o.Turn
	if n == 0 {
		// Read as far as the fork's point, streamed.
		if f, err := os.Open(path); err == nil {
			var t rewindcmd.TurnLog
			_ = sessioncmd.EachTransaction(f, func(tx sessioncmd.Transaction) bool {
				if len(tx.Facts) > 0 && tx.Facts[0].Seq > o.At {
					return false
				}
				t.Add(tx.Facts)
				return true
			})
			f.Close()
			for _, u := range t.Turns {
				if u.Seq <= o.At {
					n = u.N
				}
			}
		}
	}
	if n == 0 {
		return "fork of " + short + " at its start"
	}
	return fmt.Sprintf("fork of %s at turn %d", short, n)
}
