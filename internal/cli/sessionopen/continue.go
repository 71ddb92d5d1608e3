// Package sessionopen is the session a run opens and what waits beside
// it: the newest usable session --continue resumes, the model /model chose
// for it, and the journal of the user's !commands whose output the next
// prompt carries. It reads the store only; the runner decides when.
package sessionopen

import (
	"cmp"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tiny-agent/tiny-go/internal/agents"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// newestUsable refuses --continue when the newest session is corrupt:
// quietly taking an older one would continue a conversation the user did
// not mean, and hide that the newest one is damaged.
func newestUsable(s store.Summary) error {
	if s.State != store.SummaryCorrupt {
		return nil
	}
	why := "it is corrupt"
	if c := s.Corruption; c != nil {
		why = fmt.Sprintf("it is corrupt (%s at line %d", c.Code, c.Line)
		if c.Detail != "" {
			why += ": " + c.Detail
		}
		why += ")"
	}
	return fmt.Errorf("--continue: the newest session %s (%s) cannot be continued: %s. Inspect it with: tiny-go session verify %s; or resume another with --session <id> (tiny-go session list)", s.ID, s.Path, why, s.ID)
}

// OpenNewest opens the session --continue resumes: the newest one in
// `session list`'s order that holds more than its header (a start that
// failed before its first prompt leaves just a header), or whose
// !commands wait beside it for the next prompt. Only headers are
// read to find it, and it is reduced once, by the open, not first to be
// summarized (issue 17). finish completes an interrupted rewind of it
// before it is opened.
func OpenNewest(cwd string, opts store.Options, finish func(path string) error) (*store.Store, error) {
	heads, err := store.Heads(cwd)
	if err != nil {
		return nil, fmt.Errorf("--continue: %w", err)
	}
	for _, h := range heads {
		if h.Corruption == nil && !h.Lines && !ShellJournalled(h.Path) {
			continue // header only
		}
		if _, child := agents.ParentOf(h.Path); child {
			continue // a subagent's: its parent resumes it
		}
		if s, err := corruptLaterFork(heads, h); err != nil || s != nil {
			if err != nil {
				return nil, fmt.Errorf("--continue: %w", err)
			}
			return nil, newestUsable(*s)
		}
		if h.Corruption != nil {
			return nil, newestUsable(store.Summary{ID: h.ID, Path: h.Path, State: store.SummaryCorrupt, Corruption: h.Corruption})
		}
		if err := finish(h.Path); err != nil {
			return nil, err
		}
		st, err := store.Open(cwd, h.ID, opts)
		var ce *store.CorruptError
		if errors.As(err, &ce) && !integrityCode(ce.Corruption.Code) {
			return nil, newestUsable(store.Summary{ID: h.ID, Path: h.Path, State: store.SummaryCorrupt, Corruption: ce.Corruption})
		}
		if err != nil {
			return nil, err
		}
		if s := st.State(); s.Operation == nil && !hasPrompt(s) && !ShellJournalled(h.Path) {
			st.Close() // committed lines, but no prompt: passed by like a header
			continue
		}
		return st, nil
	}
	return nil, fmt.Errorf("--continue: no session in %s to continue", cwd)
}

// corruptLaterFork returns the newest session that `session list` puts
// before h only because it is corrupt: a list orders a session by its
// header's date, but a corrupt one by its file name's, and a fork's name
// is dated when it was made while its header keeps its source's date. Only
// such files (forks made after h was started) are reduced.
func corruptLaterFork(heads []store.Head, h store.Head) (*store.Summary, error) {
	after := func(t time.Time, id string) bool { return cmp.Or(t.Compare(h.Started), cmp.Compare(id, h.ID)) > 0 }
	var newest *store.Summary
	for _, g := range heads {
		if g.Corruption != nil || !g.Lines || g.ID == h.ID || after(g.Started, g.ID) || !after(g.Stamp, g.ID) {
			continue
		}
		if newest != nil && cmp.Or(g.Stamp.Compare(newest.Started), cmp.Compare(g.ID, newest.ID)) <= 0 {
			continue
		}
		s, err := store.Summarize(g)
		if err != nil {
			return nil, err
		}
		if s.State == store.SummaryCorrupt {
			newest = &s
		}
	}
	return newest, nil
}

// integrityCode reports whether code is one of the store's integrity
// findings, which an open reports as it always has.
func integrityCode(code string) bool {
	return code == store.CorruptDigestMismatch || code == store.CorruptTruncated || code == store.CorruptTampered || code == store.CorruptUnsealed
}

// hasPrompt reports whether st holds a user message (headerOnly's test on
// a summary).
func hasPrompt(st *session.State) bool {
	for _, m := range st.Transcript {
		if m.Role == session.RoleUser && m.Content != nil {
			return true
		}
	}
	return false
}

// ModelFile, beside a session, holds the model /model chose, so a resume
// continues with it (the header keeps the model the session began with).
const ModelFile = "model"

// ChosenModel is the model /model chose for the session at path, or "".
func ChosenModel(path string) string {
	b, err := store.ReadSidecarFile(path, ModelFile)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
