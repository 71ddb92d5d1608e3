// Package rewindcmd is tiny-go's rewind: `tiny-go session rewind`, and the
// planning, journal and words that /rewind in a run shares with it. A
// rewind puts files back to before a user turn from the session's
// checkpoints and forks the conversation there; an interrupted one is
// finished before anything opens the session (FinishPending).
package rewindcmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/checkpoint"
	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/cli/sessioncmd"
	"github.com/tiny-agent/tiny-go/internal/faultpoint"
	"github.com/tiny-agent/tiny-go/internal/fork"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/statekey"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// Turn is one user message of a session: what `/rewind` lists and
// `session rewind --turn N` counts (1-based, in commit order).
type Turn struct {
	N        int
	Seq      int64 // the user entry's seq
	Boundary int64 // the last seq before its transaction: a conversation rewind forks there
	Prompt   string
	At       int64 // ms
}

// TurnScan is what one streamed pass over a session tells a rewind: its
// user turns, the seq of every toolStarted fact (checkpoints are keyed by
// its id), and the tool calls that may have changed files.
type TurnScan struct {
	TurnLog
	calls []startedCall
}

// startedCall is a toolStarted fact of a call that may have run: not a
// read, and not settled in its own transaction.
type startedCall struct {
	seq            int64
	id             string // the fact's id
	tool, toolCall string
}

// scanTurns lists the user turns of the session read from rd, in one
// streamed pass; with calls set it also notes the seq of every
// toolStarted fact and the calls that may have changed files. Memory is
// what it lists, not the session.
func scanTurns(rd io.Reader, calls bool) (*TurnScan, error) {
	var s TurnScan
	if calls {
		s.seqs = map[string]int64{}
	}
	err := sessioncmd.EachTransaction(rd, func(tx sessioncmd.Transaction) bool {
		s.Add(tx.Facts)
		if !calls {
			return true
		}
		for _, f := range tx.Facts {
			if ts, ok := f.Record.(*session.ToolStarted); ok && ts.ToolName != "read" && !settledAtStart(tx.Facts, f.ID) {
				s.calls = append(s.calls, startedCall{seq: f.Seq, id: strings.Clone(f.ID), tool: strings.Clone(ts.ToolName), toolCall: strings.Clone(ts.ToolCallID)})
			}
		}
		return true
	})
	return &s, err
}

// ScanTurnsFile is scanTurns over the session file at path.
func ScanTurnsFile(path string, calls bool) (*TurnScan, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return scanTurns(f, calls)
}

// TurnLog collects the user turns of a session, and with seqs set the seq
// of each toolStarted, one transaction at a time. What it keeps is copied:
// a streamed pass's decoder carves strings from shared chunks, which one
// kept string would hold whole.
type TurnLog struct {
	Turns []Turn
	seqs  map[string]int64
}

// Add notes the user turns (and toolStarted seqs) of one transaction.
func (t *TurnLog) Add(facts []session.Fact) {
	for _, f := range facts {
		if u, ok := f.Entry.(*session.UserEntry); ok {
			t.Turns = append(t.Turns, Turn{N: len(t.Turns) + 1, Seq: f.Seq, Boundary: facts[0].Seq - 1, Prompt: strings.Clone(u.Content), At: f.Timestamp})
		}
		if _, ok := f.Record.(*session.ToolStarted); ok && t.seqs != nil {
			t.seqs[strings.Clone(f.ID)] = f.Seq
		}
	}
}

// Request is one rewind of a session to before user turn Turn.
type Request struct {
	Path  string `json:"path"` // the session file
	Turn  int    `json:"turn"`
	Force bool   `json:"force"`
	// Files and Conversation say which halves to do.
	Files        bool `json:"files"`
	Conversation bool `json:"conversation"`
}

// Journal is written (synced, by rename) before a rewind changes
// anything and removed when it is complete; a rewind that finds one
// finishes it first. It holds the plan, so rerunning applies the same
// decisions, and the fork's id, so the conversation half forks once.
type Journal struct {
	ID      string           `json:"id"`
	Request Request          `json:"request"`
	Turn    TurnInfo         `json:"turnInfo"`
	Plan    *checkpoint.Plan `json:"plan,omitempty"`
	ForkID  string           `json:"forkId,omitempty"`
}

// TurnInfo is the turn a journal rewinds to, as the journal keeps it.
type TurnInfo struct {
	N        int    `json:"n"`
	Boundary int64  `json:"boundary"`
	Prompt   string `json:"prompt"`
}

// JournalFile is the name of the journal in the session's sidecar directory.
const JournalFile = "rewind.json"

// Outcome is what a rewind did.
type Outcome struct {
	Turn     TurnInfo
	Finished bool // an interrupted rewind was finished
	Files    *checkpoint.Summary
	Fork     *fork.Result
}

// SessionCwd is the working directory a canonical session file belongs
// to: <cwd>/.tiny-agent/sessions/<file>.
func SessionCwd(path string) string {
	return filepath.Dir(filepath.Dir(filepath.Dir(path)))
}

// Plan plans a rewind without changing anything.
func Plan(ctx context.Context, req Request, capBytes int64) (*Journal, error) {
	scan, err := ScanTurnsFile(req.Path, true)
	if err != nil {
		return nil, err
	}
	turns, seqs := scan.Turns, scan.seqs
	if len(turns) == 0 {
		return nil, errors.New("the session has no user turn to rewind to")
	}
	if req.Turn < 1 || req.Turn > len(turns) {
		return nil, cmdutil.UsageErrorf("--turn must be between 1 and %d (the session's user turns)", len(turns))
	}
	t := turns[req.Turn-1]
	id, err := store.NewID()
	if err != nil {
		return nil, err
	}
	j := &Journal{ID: id, Request: req, Turn: TurnInfo{N: t.N, Boundary: t.Boundary, Prompt: t.Prompt}}
	if req.Conversation {
		if j.ForkID, err = store.NewID(); err != nil {
			return nil, err
		}
	}
	if !req.Files {
		return j, nil
	}
	cs, err := checkpoint.Open(SessionCwd(req.Path), checkpoint.Options{Cap: capBytes})
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	recs, refused, err := readCheckpointsChecked(req.Path)
	if err != nil {
		return nil, err
	}
	start := len(recs)
	for i, r := range recs {
		if seq, ok := seqs[r.ToolStartedID]; ok && seq >= t.Seq {
			start = i
			break
		}
	}
	plan, err := cs.PlanRewind(ctx, recs[start:], req.Force)
	if err != nil {
		return nil, fmt.Errorf("plan the rewind: %w", err)
	}
	j.Plan = plan
	plan.Warnings = append(plan.Warnings, refused...)
	// A call with no checkpoint at all (checkpoints were off, or its index
	// line was lost) changed what no rewind can see: say so.
	recorded := map[string]bool{}
	for _, r := range recs {
		recorded[r.ToolStartedID] = true
	}
	for _, c := range scan.calls {
		if c.seq >= t.Seq && !recorded[c.id] {
			plan.Warnings = append(plan.Warnings, fmt.Sprintf("no checkpoint was recorded for %s (%s, seq %d): what it changed cannot be put back", c.tool, c.toolCall, c.seq))
		}
	}
	return j, nil
}

// settledAtStart reports whether the call started by toolStarted fact id
// has its result in the same transaction: a denied call commits its intent
// and its error result together and never runs, so it changed nothing.
func settledAtStart(tx []session.Fact, id string) bool {
	for _, f := range tx {
		if e, ok := f.Entry.(*session.ToolResultEntry); ok && e.ToolStartedID == id {
			return true
		}
	}
	return false
}

func readCheckpoints(sessionPath string) ([]checkpoint.Record, error) {
	recs, _, err := readCheckpointsChecked(sessionPath)
	return recs, err
}

// readCheckpointsChecked is readCheckpoints with a line for each record
// refused for its seal (checkpoint.ReadIndexChecked).
func readCheckpointsChecked(sessionPath string) ([]checkpoint.Record, []string, error) {
	data, err := store.ReadSidecarFile(sessionPath, checkpoint.IndexFile)
	if err != nil || data == nil {
		return nil, nil, err
	}
	return checkpoint.ReadIndexChecked(bytes.NewReader(data))
}

// Pending returns the journal of an interrupted rewind of the
// session, or nil.
func Pending(sessionPath string) (*Journal, error) {
	data, err := store.ReadSidecarFile(sessionPath, JournalFile)
	if err != nil || data == nil {
		return nil, err
	}
	if data, err = statekey.Open(rewindPurpose(sessionPath), data); err != nil {
		return nil, refuseRewindJournal(sessionPath, err)
	}
	var j Journal
	if err := json.Unmarshal(data, &j); err != nil {
		dir, _ := store.SidecarDir(sessionPath, false)
		return nil, fmt.Errorf("the journal of an interrupted rewind (%s) is damaged: %w", filepath.Join(dir, JournalFile), err)
	}
	j.Request.Path = sessionPath
	return &j, nil
}

func writeJournal(sessionPath string, j *Journal) error {
	data, err := json.Marshal(j)
	if err == nil {
		data, err = statekey.Seal(rewindPurpose(sessionPath), data)
	}
	if err != nil {
		return err
	}
	return store.ReplaceSidecarFile(sessionPath, JournalFile, data)
}

// rewindPurpose binds a rewind journal's seal to its session: what the
// next start finishes from it is only what tiny-go planned.
func rewindPurpose(sessionPath string) string {
	return "rewind/" + filepath.Base(sessionPath)
}

// refusedRewindError is a rewind journal tiny-go did not seal.
type refusedRewindError struct {
	session, aside string
	err            error
}

func (e *refusedRewindError) Error() string {
	return fmt.Sprintf("refused the journal of an interrupted rewind of %s: %v; nothing of it was done (moved to %s)", SessionLabel(e.session), e.err, e.aside)
}

// refuseRewindJournal moves a refused journal aside, so it is said once.
func refuseRewindJournal(sessionPath string, err error) error {
	dir, derr := store.SidecarDir(sessionPath, false)
	if derr != nil {
		return derr
	}
	aside := filepath.Join(dir, JournalFile+".refused")
	if rerr := os.Rename(filepath.Join(dir, JournalFile), aside); rerr != nil {
		return rerr
	}
	return &refusedRewindError{session: sessionPath, aside: aside, err: err}
}

// AfterApply is a test seam (nil in production): a test child sets
// it to pause a rewind after some of its files are put back.
var AfterApply func(done int)

// Execute carries out a journaled rewind: the journal is made
// durable, the files are put back (each by rename), the rewind is recorded
// as a checkpoint of its own (so it can be undone), the conversation is
// forked, and the journal is removed. Every step is safe to repeat, so a
// rewind killed anywhere is finished by running it again.
func Execute(ctx context.Context, j *Journal, capBytes int64, finished bool) (*Outcome, error) {
	path := j.Request.Path
	if err := writeJournal(path, j); err != nil {
		return nil, fmt.Errorf("rewind journal: %w", err)
	}
	out := &Outcome{Turn: j.Turn, Finished: finished}
	if j.Request.Files && j.Plan != nil {
		cs, err := checkpoint.Open(SessionCwd(path), checkpoint.Options{Cap: capBytes, AfterApply: AfterApply})
		if err != nil {
			return nil, err
		}
		defer cs.Close()
		sum, done, err := cs.Apply(ctx, j.Plan, j.Request.Force)
		if err != nil {
			return nil, fmt.Errorf("rewind stopped (run it again to finish): %w", err)
		}
		out.Files = &sum
		faultpoint.Hit(faultpoint.RewindDone)
		if err := recordRewind(path, j.ID, done); err != nil {
			return nil, err
		}
	}
	if j.Request.Conversation {
		res, err := forkOnce(path, j)
		if err != nil {
			return nil, err
		}
		out.Fork = res
	}
	dir, err := store.SidecarDir(path, false)
	if err == nil {
		if err := os.Remove(filepath.Join(dir, JournalFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	return out, nil
}

// recordRewind appends the rewind's checkpoint records unless a run that
// was interrupted already did.
func recordRewind(sessionPath, id string, done []checkpoint.Action) error {
	recs, err := readCheckpoints(sessionPath)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if r.Rewind == id {
			return nil
		}
	}
	return checkpoint.AppendRecords(SidecarAppender{SessionPath: sessionPath, Name: checkpoint.IndexFile},
		checkpoint.RewindRecords(id, done, time.Now().UnixMilli())...)
}

// forkOnce writes the conversation fork under the journal's id, or finds
// it written by an interrupted run.
func forkOnce(sourcePath string, j *Journal) (*fork.Result, error) {
	cwd := SessionCwd(sourcePath)
	if p, err := store.PathByID(cwd, j.ForkID); err == nil {
		if o, _ := fork.ReadOrigin(p); o == nil {
			src, _ := store.ReadHeader(sourcePath)
			_ = fork.WriteOrigin(p, fork.Origin{Source: src.ID, At: j.Turn.Boundary, Turn: j.Turn.N, CreatedAt: time.Now().UnixMilli()})
		}
		return &fork.Result{ID: j.ForkID, Path: p}, nil
	}
	res, err := fork.Write(sourcePath, j.Turn.Boundary, j.ForkID, j.Turn.N, time.Now())
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// lockForRewind refuses to rewind a session that another process is
// running (its agent could be changing the same files) and, until release
// is called, keeps any from opening it for writing: it holds a shared lock
// on the session file, which the writer's exclusive lock conflicts with.
func lockForRewind(path, id string) (release func(), err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("session %s is open in another process; end it (or use /rewind there) before rewinding", id)
		}
		return nil, err
	}
	return func() { f.Close() }, nil
}

// WriteSummary prints what a rewind will do (preview) or did.
func WriteSummary(w io.Writer, turn TurnInfo, sum *checkpoint.Summary, preview bool) {
	verb := map[bool][3]string{false: {"restored", "created", "deleted"}, true: {"restore", "create", "delete"}}[preview]
	head := "Files put back to before turn %d (%s):"
	if preview {
		head = "Rewinding files to before turn %d (%s) will:"
	}
	fmt.Fprintf(w, head+"\n", turn.N, store.OneLine(turn.Prompt, 60))
	if sum == nil || sum.Empty() {
		fmt.Fprintln(w, "  nothing to change: no file the agent changed since differs from then")
		return
	}
	for i, list := range [][]string{sum.Restored, sum.Created, sum.Deleted} {
		for _, p := range list {
			fmt.Fprintf(w, "  %-9s %s\n", verb[i], p)
		}
	}
	for _, s := range sum.Skipped {
		fmt.Fprintf(w, "  %-9s %s: %s\n", "skip", s.Path, s.Reason)
	}
	for _, warn := range sum.Warnings {
		fmt.Fprintf(w, "  warning   %s\n", warn)
	}
	if !preview {
		fmt.Fprintf(w, "%d restored, %d created, %d deleted, %d skipped\n", len(sum.Restored), len(sum.Created), len(sum.Deleted), len(sum.Skipped))
	}
}

func writeRewindOutcome(w io.Writer, out *Outcome) {
	if out.Finished {
		fmt.Fprintf(w, "Finished an interrupted rewind to before turn %d.\n", out.Turn.N)
	}
	if out.Files != nil {
		WriteSummary(w, out.Turn, out.Files, false)
	}
	writeForkLines(w, out)
}

func writeForkLines(w io.Writer, out *Outcome) {
	if out.Fork != nil {
		fmt.Fprintf(w, "Conversation rewound to before turn %d in a new session %s (the original is unchanged).\nContinue it with: tiny-go --session %s\n", out.Turn.N, out.Fork.ID, out.Fork.ID)
	}
}
