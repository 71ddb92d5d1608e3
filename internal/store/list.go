package store

import (
	"cmp"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/tiny-agent/tiny-go/internal/session"
)

// SummaryState is how a listed session stands.
type SummaryState string

const (
	SummaryIdle           SummaryState = "idle"
	SummaryOpenRun        SummaryState = "open run"
	SummaryOpenCompaction SummaryState = "open compaction"
	SummaryCorrupt        SummaryState = "corrupt"
)

// Summary describes one session file for `tiny-go session list`.
type Summary struct {
	ID         string
	Path       string
	Started    time.Time // header createdAt; the file name stamp if corrupt
	Model      string    // empty if the header is unreadable
	LastPrompt string    // the last user message on one line, trimmed
	// FirstPrompt is the first user message on one line, trimmed.
	FirstPrompt string
	State       SummaryState
	Corruption  *session.Corruption // set when State is SummaryCorrupt
	Size        int64               // bytes on disk, torn tail included
	// ContinuationOwed: idle, but a run that reached the context limit
	// was compacted and its continuation run has not started yet (a crash
	// between the two); the next resume starts it (runtime.md §4).
	ContinuationOwed bool
	// Open is the reduced state when an operation is open (State is
	// SummaryOpenRun or SummaryOpenCompaction), for callers that ask the
	// planner whether it would resume; nil otherwise.
	Open *session.State
}

// lastPromptRunes bounds Summary.LastPrompt.
const lastPromptRunes = 60

// List summarizes the sessions of cwd, newest first. It reads every
// canonical file of the sessions directory without locking or modifying
// it; symlinks and other names are skipped. A missing directory is an
// empty list.
func List(cwd string) ([]Summary, error) {
	out, err := eachSession(cwd, summarize)
	slices.SortFunc(out, func(a, b Summary) int { return newestFirst(a.Started, a.ID, b.Started, b.ID) })
	return out, err
}

// eachSession reads every canonical session file of cwd with read, in
// directory order, without locking or modifying it; symlinks and other
// names are skipped, and so is a file that vanished since the directory
// was read. A missing directory is an empty list.
func eachSession[T any](cwd string, read func(f *os.File, id string, stamp time.Time) (T, error)) ([]T, error) {
	dir, _, err := openSessionsDir(cwd, false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	entries, err := os.ReadDir(dir.Name())
	if err != nil {
		return nil, err
	}
	var out []T
	for _, e := range entries {
		stamp, id, ok := parseFileName(e.Name())
		if !ok || !e.Type().IsRegular() {
			continue
		}
		f, err := openAt(dir, e.Name(), unix.O_RDONLY)
		if err != nil {
			continue // vanished or replaced since ReadDir
		}
		v, err := read(f, id, stamp)
		f.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// newestFirst orders sessions by start, newest first, then by id.
func newestFirst(aStarted time.Time, aID string, bStarted time.Time, bID string) int {
	return cmp.Or(bStarted.Compare(aStarted), cmp.Compare(bID, aID))
}

// summarize reduces the session in f, streamed (the file is never held
// whole, and nothing of it once the read returns): a list is made again
// and again (the resume picker, an editor's session list) over every
// session of the directory.
func summarize(f *os.File, id string, stamp time.Time) (Summary, error) {
	sum := Summary{ID: id, Path: f.Name(), Started: stamp}
	var hint int64
	if fi, err := f.Stat(); err == nil {
		hint = fi.Size()
	}
	r, n, c, err := session.ReadSession(f, hint, session.ReadHooks{})
	if err != nil {
		return sum, err
	}
	sum.Size = max(n, hint) // a corrupt file was not read to its end
	if c != nil {
		sum.State, sum.Corruption = SummaryCorrupt, c
		return sum, nil
	}
	sum.Size = n
	st := r.State()
	if st.Header.ID != id {
		sum.State = SummaryCorrupt
		sum.Corruption = &session.Corruption{Code: session.CorruptInvalidHeader, Line: 1, Detail: "header id does not match the file name"}
		return sum, nil
	}
	sum.Started = time.UnixMilli(st.Header.CreatedAt).UTC()
	sum.Model = st.Header.Model
	for _, m := range st.Transcript {
		if m.Role == session.RoleUser && m.Content != nil {
			sum.FirstPrompt = OneLine(*m.Content, lastPromptRunes)
			break
		}
	}
	for i := len(st.Transcript) - 1; i >= 0; i-- {
		if m := st.Transcript[i]; m.Role == session.RoleUser && m.Content != nil {
			sum.LastPrompt = OneLine(*m.Content, lastPromptRunes)
			break
		}
	}
	switch {
	case st.Operation == nil:
		sum.State, sum.ContinuationOwed = SummaryIdle, st.ContinuationOwed
	case st.Operation.Kind == session.OperationCompaction:
		sum.State, sum.Open = SummaryOpenCompaction, st
	default:
		sum.State, sum.Open = SummaryOpenRun, st
	}
	return sum, nil
}

// OneLine collapses runs of white space in s to single spaces, trims it,
// and cuts it to at most max runes, marking a cut with "…".
func OneLine(s string, max int) string {
	// Only the first max+1 runes are joined: a long tool output costs no
	// more than a short one.
	var b strings.Builder
	b.Grow(min(len(s), utf8.UTFMax*(max+1)))
	n := 0
	for f := range strings.FieldsSeq(s) {
		if n > 0 {
			b.WriteByte(' ')
			n++
		}
		for i := range f {
			if n > max {
				f = f[:i]
				break
			}
			n++
		}
		b.WriteString(f)
		if n > max {
			break
		}
	}
	out := b.String()
	if n <= max {
		return out
	}
	if !utf8.ValidString(out) {
		// Invalid bytes become U+FFFD, as a []rune conversion makes them.
		r := []rune(out)
		return strings.TrimRight(string(r[:max-1]), " ") + "…"
	}
	i := 0
	for range max - 1 {
		_, size := utf8.DecodeRuneInString(out[i:])
		i += size
	}
	return strings.TrimRight(out[:i], " ") + "…"
}

// IDs are the ids of the sessions of cwd, in no order; the files are not
// read.
func IDs(cwd string) ([]string, error) {
	return eachSession(cwd, func(_ *os.File, id string, _ time.Time) (string, error) { return id, nil })
}
