package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/store"
)

func newSessionShowCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "show <id|file>",
		Short: "Print a readable timeline of a session",
		Long: `Print a session as a timeline: prompts, answers, model requests, tool calls
with their outcomes, aborts, compactions with their partition, and the usage
totals. Every fact is prefixed with its seq and UTC time.

The session is a file path, or a session id of the working directory.
Exit status 0 when valid, 1 when corrupt (the valid prefix is shown).`,
		Args: exactArgs(1, "a session id or file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := a.openSession(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			path := f.Name()
			switch err := finishPendingRewind(cmd.Context(), path, a.getenv, a.stderr); {
			case errors.Is(err, errRewindInProgress):
				fmt.Fprintf(a.stderr, "%s: a rewind of this session is in progress in another process\n", programName)
			case err != nil:
				return err
			}
			w := bufio.NewWriterSize(a.stdout, 64<<10)
			st, c, turns, err := writeShow(w, f)
			if err == nil {
				writeUndoInfo(w, path, st, turns, a.getenv)
				err = w.Flush()
			}
			if err != nil {
				return usageError{pathError(path, err)}
			}
			if c != nil {
				return exitError{exitFailed}
			}
			return nil
		},
	}
}

// Widths of the text excerpts in the timeline.
const (
	excerptRunes = 200
	argsRunes    = 120
)

// writeShow prints the timeline of the session in f as the one streamed
// pass that reduces it reaches each fact; a corrupt session's valid
// prefix is shown. It returns the user turns of that prefix.
func writeShow(w io.Writer, f *os.File) (*session.State, *session.Corruption, []userTurn, error) {
	var (
		perOperation operationUsage
		turns        turnLog
	)
	headed := false
	hooks := session.ReadHooks{
		Header: func(h session.Header) {
			headed = true
			fmt.Fprintf(w, "session %s  %s %s  created %s\n", h.ID, h.Provider, h.Model, formatMillis(h.CreatedAt))
		},
		Transaction: func(_ int, facts []session.Fact) {
			for _, f := range facts {
				writeFact(w, f)
			}
			perOperation.add(facts)
			turns.add(facts)
		},
	}
	r, read, c, err := store.ReadSession(f, hooks)
	if err != nil {
		return nil, nil, nil, err
	}
	if !headed {
		fmt.Fprintf(w, "session file %s\n", f.Name())
	}
	var st *session.State
	if c == nil {
		st = r.State()
		u := st.Usage
		fmt.Fprintf(w, "usage: input %d, output %d, cacheRead %d, cacheWrite %d, cache hit %s\n", u.Input, u.Output, u.CacheRead, u.CacheWrite, cacheHit(u))
		for _, line := range perOperation.lines() {
			fmt.Fprintln(w, line)
		}
		fmt.Fprintf(w, "open operation: %s\n", describeOperation(st.Operation))
		if read > st.RepairedLength {
			fmt.Fprintf(w, "torn tail: %d uncommitted bytes after byte %d\n", read-st.RepairedLength, st.RepairedLength)
		}
	}
	if c != nil {
		fmt.Fprintf(w, "corrupt: %s\n", c.Describe())
	}
	return st, c, turns.turns, nil
}

// describeFact renders one fact as one or more lines.
func describeFact(f session.Fact) []string {
	switch {
	case f.Entry != nil:
		return describeEntry(f.ID, f.Entry)
	case f.Record != nil:
		return describeRecord(f.Record)
	case f.Usage != nil:
		u := f.Usage
		owner := "model attempt " + u.AttemptID
		if u.ToolStartedID != "" {
			owner = "tool " + u.ToolStartedID
		}
		line := fmt.Sprintf("usage of %s: input %d, output %d, cacheRead %d, cacheWrite %d",
			owner, u.Usage.Input, u.Usage.Output, u.Usage.CacheRead, u.Usage.CacheWrite)
		if u.ToolStartedID == "" {
			line += ", cache hit " + cacheHit(u.Usage)
		}
		return []string{line}
	}
	return []string{"(empty fact)"}
}

func describeEntry(id string, e session.Entry) []string {
	switch e := e.(type) {
	case *session.UserEntry:
		return []string{"user: " + store.OneLine(e.Content, excerptRunes)}
	case *session.AssistantEntry:
		text := "(no text)"
		if e.Content != nil && *e.Content != "" {
			text = store.OneLine(*e.Content, excerptRunes)
		}
		lines := []string{fmt.Sprintf("assistant [%s]: %s", e.StopReason, text)}
		for i, c := range e.ToolCalls {
			lines = append(lines, fmt.Sprintf("  call %d %s %s %s", i, c.ID, c.Function.Name, store.OneLine(c.Function.Arguments, argsRunes)))
		}
		return lines
	case *session.ToolResultEntry:
		return []string{fmt.Sprintf("tool result %s %s: %s, %d chars: %s",
			e.ToolName, e.ToolCallID, e.Result, utf8.RuneCountInString(e.Content), store.OneLine(e.Content, excerptRunes))}
	case *session.SyntheticEntry:
		return []string{fmt.Sprintf("tool result %s %s: synthetic %s (not executed)", e.ToolName, e.ToolCallID, e.Reason)}
	case *session.CompactionEntry:
		return []string{fmt.Sprintf("compaction summary (%d chars), compacted through %s, retained tail of %d message(s): %s",
			utf8.RuneCountInString(e.Summary), e.CompactedThroughEntryID, len(e.RetainedTail), store.OneLine(e.Summary, excerptRunes))}
	}
	return []string{fmt.Sprintf("entry %s", id)}
}

func describeRecord(r session.Record) []string {
	switch r := r.(type) {
	case *session.RunStarted:
		return []string{fmt.Sprintf("run %s started", r.OperationID)}
	case *session.CompactionStarted:
		// (writeFact writes its id lists itself.)
		return []string{fmt.Sprintf("compaction %s started through %s", r.OperationID, r.InputThroughEntryID)}
	case *session.StepAttempt:
		return []string{fmt.Sprintf("model request: %s step %s attempt %d (%s)", r.StepKind, r.StepID, r.Attempt, r.ConfigurationSnapshot.Model)}
	case *session.StepFailed:
		return []string{fmt.Sprintf("model request failed: %s: %s", r.Error.Code, store.OneLine(r.Error.Message, excerptRunes))}
	case *session.ToolStarted:
		return []string{fmt.Sprintf("tool started %s %s (replay %s): %s", r.ToolName, r.ToolCallID, r.Replay, store.OneLine(string(r.Arguments), argsRunes))}
	case *session.AbortRequested:
		s := fmt.Sprintf("abort requested (%s phase", r.Phase)
		if r.ToolCallID != "" {
			s += ", call " + r.ToolCallID
		}
		return []string{s + ")"}
	case *session.OperationFinished:
		s := fmt.Sprintf("%s %s finished: %s", r.OperationKind, r.OperationID, r.Outcome)
		if r.Completion != "" {
			s += " (" + string(r.Completion) + ")"
		}
		if r.Error != nil {
			s += fmt.Sprintf(": %s: %s", r.Error.Code, store.OneLine(r.Error.Message, excerptRunes))
		}
		return []string{s}
	}
	return []string{fmt.Sprintf("record of operation %s", r.Operation())}
}

// writeFact writes the lines of one fact, the first prefixed with its seq
// and UTC time, the others indented under it. A compaction's id lists (every
// message entry of the session) are written as they are read, never built.
func writeFact(w io.Writer, f session.Fact) {
	var b [64]byte
	prefix := append(b[:0], '#')
	prefix = strconv.AppendInt(prefix, f.Seq, 10)
	for len(prefix) < 5 {
		prefix = append(prefix, ' ')
	}
	prefix = append(prefix, ' ')
	prefix = time.UnixMilli(f.Timestamp).UTC().AppendFormat(prefix, "15:04:05.000")
	prefix = append(prefix, "  "...)
	indent := strings.Repeat(" ", len(prefix))
	if r, ok := f.Record.(*session.CompactionStarted); ok {
		fmt.Fprintf(w, "%scompaction %s started through %s\n", prefix, r.OperationID, r.InputThroughEntryID)
		writeIDList(w, indent+"  compacted", r.CompactedEntryIDs)
		writeIDList(w, indent+"  retained", r.RetainedEntryIDs)
		return
	}
	for i, line := range describeFact(f) {
		if i == 0 {
			w.Write(prefix)
		} else {
			io.WriteString(w, indent)
		}
		io.WriteString(w, line)
		io.WriteString(w, "\n")
	}
}

// writeIDList writes the line "label (n): id id ..." or "label (0): -".
func writeIDList(w io.Writer, label string, ids []string) {
	fmt.Fprintf(w, "%s (%d): ", label, len(ids))
	if len(ids) == 0 {
		io.WriteString(w, "-")
	}
	for i, id := range ids {
		if i > 0 {
			io.WriteString(w, " ")
		}
		io.WriteString(w, id)
	}
	io.WriteString(w, "\n")
}

// cacheHit is the cache hit rate of runtime.md §1,
// cacheRead / (input + cacheRead + cacheWrite), or "n/a" without input.
func cacheHit(u session.Usage) string {
	total := u.Input + u.CacheRead + u.CacheWrite
	if total == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", float64(u.CacheRead)*100/float64(total))
}

// operationUsage sums the model usage of each operation, in the order the
// operations appear, for its cache hit rate (usage facts of an operation
// may follow its terminal).
type operationUsage struct {
	order []string
	sums  map[string]session.Usage
}

func (o *operationUsage) add(facts []session.Fact) {
	for _, f := range facts {
		if f.Usage == nil || f.Usage.AttemptID == "" {
			continue
		}
		if o.sums == nil {
			o.sums = make(map[string]session.Usage)
		}
		id := f.Usage.OperationID
		s, seen := o.sums[id]
		if !seen {
			o.order = append(o.order, id)
		}
		u := f.Usage.Usage
		o.sums[id] = session.Usage{Input: s.Input + u.Input, Output: s.Output + u.Output, CacheRead: s.CacheRead + u.CacheRead, CacheWrite: s.CacheWrite + u.CacheWrite}
	}
}

func (o *operationUsage) lines() []string {
	var out []string
	for _, id := range o.order {
		u := o.sums[id]
		out = append(out, fmt.Sprintf("model usage of operation %s: input %d, output %d, cacheRead %d, cacheWrite %d, cache hit %s", id, u.Input, u.Output, u.CacheRead, u.CacheWrite, cacheHit(u)))
	}
	return out
}
