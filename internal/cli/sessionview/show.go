package sessionview

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

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/cli/rewindcmd"
	"github.com/tiny-agent/tiny-go/internal/cli/sessioncmd"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// NewShowCommand is `tiny-go session show <id|file>`: the timeline.
func NewShowCommand(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "show <id|file>",
		Short: "Print a readable timeline of a session",
		Long: `Print a session as a timeline: prompts, answers, model requests, tool calls
with their outcomes, aborts, compactions with their partition, and the usage
totals. Every fact is prefixed with its seq and UTC time.

The session is a file path, or a session id of the working directory.
Exit status 0 when valid, 1 when corrupt (the valid prefix is shown).`,
		Args: cmdutil.ExactArgs(1, "a session id or file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			file, err := sessioncmd.Open(f, args[0])
			if err != nil {
				return err
			}
			defer file.Close()
			path := file.Name()
			switch err := rewindcmd.FinishPending(cmd.Context(), path, f.Getenv, f.Stderr); {
			case errors.Is(err, rewindcmd.ErrInProgress):
				fmt.Fprintf(f.Stderr, "%s: a rewind of this session is in progress in another process\n", cmdutil.ProgramName)
			case err != nil:
				return err
			}
			w := bufio.NewWriterSize(f.Stdout, 64<<10)
			st, c, turns, err := writeShow(w, file)
			if err == nil {
				writeUndoInfo(w, path, st, turns, f.Getenv)
				err = w.Flush()
			}
			if err != nil {
				return cmdutil.UsageError{Err: sessioncmd.PathError(path, err)}
			}
			if c != nil {
				return cmdutil.ExitError{Code: cmdutil.ExitFailed}
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
func writeShow(w io.Writer, f *os.File) (*session.State, *session.Corruption, []rewindcmd.Turn, error) {
	var (
		perOperation operationUsage
		turns        rewindcmd.TurnLog
	)
	headed := false
	// The timeline is written by a goroutine of its own, from copies of
	// the applied transactions' facts (their payloads stay valid): the
	// reducer's two goroutines are busy enough without it.
	var (
		full, free = make(chan *factChunk, 4), make(chan *factChunk, 4)
		done       = make(chan struct{})
	)
	for range cap(free) {
		free <- &factChunk{}
	}
	go writeTimeline(w, full, free, done, &perOperation, &turns)
	cur := <-free
	hooks := session.ReadHooks{
		Header: func(h session.Header) {
			headed = true
			fmt.Fprintf(w, "session %s  %s %s  created %s\n", h.ID, h.Provider, h.Model, sessioncmd.FormatMillis(h.CreatedAt))
		},
		Transaction: func(_ int, facts []session.Fact) {
			cur.facts = append(cur.facts, facts...)
			cur.ends = append(cur.ends, len(cur.facts))
			if len(cur.facts) >= 512 {
				full <- cur
				cur = <-free
			}
		},
	}
	r, read, c, err := store.ReadSession(f, hooks)
	if len(cur.ends) > 0 {
		full <- cur
	}
	close(full)
	<-done
	if err != nil {
		return nil, nil, nil, err
	}
	if !headed {
		fmt.Fprintf(w, "session file %s\n", f.Name())
	}
	var st *session.State
	if c == nil {
		st = r.State()
		writeShowTotals(w, st, &perOperation, read)
	}
	if c != nil {
		fmt.Fprintf(w, "corrupt: %s\n", c.Describe())
	}
	return st, c, turns.Turns, nil
}

// writeTimeline writes the facts of the chunks that come full (handing
// each back free), adding up the usage per operation and the user's
// turns; it closes done when full is closed.
func writeTimeline(w io.Writer, full <-chan *factChunk, free chan<- *factChunk, done chan<- struct{}, perOperation *operationUsage, turns *rewindcmd.TurnLog) {
	defer close(done)
	var buf []byte
	for ch := range full {
		start := 0
		for _, end := range ch.ends {
			facts := ch.facts[start:end]
			start = end
			for _, f := range facts {
				buf = writeFact(w, f, buf)
			}
			perOperation.add(facts)
			n := len(turns.Turns)
			turns.Add(facts)
			for i := n; i < len(turns.Turns); i++ {
				// Keep only the excerpt writeUndoInfo prints (OneLine
				// builds a string of its own): the prompt's page of
				// the file need not be read again.
				turns.Turns[i].Prompt = store.OneLine(turns.Turns[i].Prompt, undoPromptRunes)
			}
		}
		ch.facts, ch.ends = ch.facts[:0], ch.ends[:0]
		free <- ch
	}
}

// writeShowTotals ends session show: the usage, per operation too, the
// open operation and a torn tail.
func writeShowTotals(w io.Writer, st *session.State, perOperation *operationUsage, read int64) {
	u := st.Usage
	fmt.Fprintf(w, "usage: input %d, output %d, cacheRead %d, cacheWrite %d, cache hit %s\n", u.Input, u.Output, u.CacheRead, u.CacheWrite, cacheHit(u))
	for _, line := range perOperation.lines() {
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "open operation: %s\n", sessioncmd.DescribeOperation(st.Operation))
	if read > st.RepairedLength {
		fmt.Fprintf(w, "torn tail: %d uncommitted bytes after byte %d\n", read-st.RepairedLength, st.RepairedLength)
	}
}

// factChunk is applied transactions on their way to the timeline writer:
// ends[i] is the end of transaction i in facts.
type factChunk struct {
	facts []session.Fact
	ends  []int
}

// appendFact appends the lines of one fact, each after the first starting
// with indent, without the final LF. (Appends, not fmt: a long session has
// a million facts.)
func appendFact(b []byte, f session.Fact, indent string) []byte {
	switch {
	case f.Entry != nil:
		return appendEntry(b, f.ID, f.Entry, indent)
	case f.Record != nil:
		return appendRecord(b, f.Record)
	case f.Usage != nil:
		u := f.Usage
		b = append(b, "usage of "...)
		if u.ToolStartedID != "" {
			b = append(append(b, "tool "...), u.ToolStartedID...)
		} else {
			b = append(append(b, "model attempt "...), u.AttemptID...)
		}
		b = appendUsage(append(b, ": "...), u.Usage)
		if u.ToolStartedID == "" {
			b = append(append(b, ", cache hit "...), cacheHit(u.Usage)...)
		}
		return b
	}
	return append(b, "(empty fact)"...)
}

// appendUsage appends "input i, output o, cacheRead r, cacheWrite w".
func appendUsage(b []byte, u session.Usage) []byte {
	b = strconv.AppendInt(append(b, "input "...), u.Input, 10)
	b = strconv.AppendInt(append(b, ", output "...), u.Output, 10)
	b = strconv.AppendInt(append(b, ", cacheRead "...), u.CacheRead, 10)
	return strconv.AppendInt(append(b, ", cacheWrite "...), u.CacheWrite, 10)
}

func appendEntry(b []byte, id string, e session.Entry, indent string) []byte {
	switch e := e.(type) {
	case *session.UserEntry:
		return append(append(b, "user: "...), store.OneLine(e.Content, excerptRunes)...)
	case *session.AssistantEntry:
		text := "(no text)"
		if e.Content != nil && *e.Content != "" {
			text = store.OneLine(*e.Content, excerptRunes)
		}
		b = append(append(append(append(b, "assistant ["...), e.StopReason...), "]: "...), text...)
		for i, c := range e.ToolCalls {
			b = strconv.AppendInt(append(append(append(b, '\n'), indent...), "  call "...), int64(i), 10)
			b = append(append(append(append(append(append(b, ' '), c.ID...), ' '), c.Function.Name...), ' '), store.OneLine(c.Function.Arguments, argsRunes)...)
		}
		return b
	case *session.ToolResultEntry:
		b = append(append(append(append(append(b, "tool result "...), e.ToolName...), ' '), e.ToolCallID...), ": "...)
		b = strconv.AppendInt(append(append(b, e.Result...), ", "...), int64(utf8.RuneCountInString(e.Content)), 10)
		return append(append(b, " chars: "...), store.OneLine(e.Content, excerptRunes)...)
	case *session.SyntheticEntry:
		b = append(append(append(append(append(b, "tool result "...), e.ToolName...), ' '), e.ToolCallID...), ": synthetic "...)
		return append(append(b, e.Reason...), " (not executed)"...)
	case *session.CompactionEntry:
		return fmt.Appendf(b, "compaction summary (%d chars), compacted through %s, retained tail of %d message(s): %s",
			utf8.RuneCountInString(e.Summary), e.CompactedThroughEntryID, len(e.RetainedTail), store.OneLine(e.Summary, excerptRunes))
	}
	return append(append(b, "entry "...), id...)
}

func appendRecord(b []byte, r session.Record) []byte {
	switch r := r.(type) {
	case *session.RunStarted:
		return append(append(append(b, "run "...), r.OperationID...), " started"...)
	case *session.CompactionStarted:
		// (writeFact writes its id lists itself.)
		return append(append(append(append(b, "compaction "...), r.OperationID...), " started through "...), r.InputThroughEntryID...)
	case *session.StepAttempt:
		b = append(append(append(append(b, "model request: "...), r.StepKind...), " step "...), r.StepID...)
		b = strconv.AppendInt(append(b, " attempt "...), int64(r.Attempt), 10)
		return append(append(append(b, " ("...), r.ConfigurationSnapshot.Model...), ')')
	case *session.StepFailed:
		b = append(append(append(b, "model request failed: "...), r.Error.Code...), ": "...)
		return append(b, store.OneLine(r.Error.Message, excerptRunes)...)
	case *session.ToolStarted:
		b = append(append(append(append(append(b, "tool started "...), r.ToolName...), ' '), r.ToolCallID...), " (replay "...)
		return append(append(append(b, r.Replay...), "): "...), store.OneLine(string(r.Arguments), argsRunes)...)
	case *session.AbortRequested:
		b = append(append(append(b, "abort requested ("...), r.Phase...), " phase"...)
		if r.ToolCallID != "" {
			b = append(append(b, ", call "...), r.ToolCallID...)
		}
		return append(b, ')')
	case *session.OperationFinished:
		b = append(append(append(append(append(b, r.OperationKind...), ' '), r.OperationID...), " finished: "...), r.Outcome...)
		if r.Completion != "" {
			b = append(append(append(b, " ("...), r.Completion...), ')')
		}
		if r.Error != nil {
			b = append(append(append(append(b, ": "...), r.Error.Code...), ": "...), store.OneLine(r.Error.Message, excerptRunes)...)
		}
		return b
	}
	return append(append(b, "record of operation "...), r.Operation()...)
}

// writeFact writes the lines of one fact, the first prefixed with its seq
// and time, the others indented to match. buf is scratch, returned for
// the next fact.
func writeFact(w io.Writer, f session.Fact, buf []byte) []byte {
	b := append(buf[:0], '#')
	b = strconv.AppendInt(b, f.Seq, 10)
	for len(b) < 5 {
		b = append(b, ' ')
	}
	b = append(b, ' ')
	b = time.UnixMilli(f.Timestamp).UTC().AppendFormat(b, "15:04:05.000")
	b = append(b, "  "...)
	indent := spaces[:len(b)]
	if r, ok := f.Record.(*session.CompactionStarted); ok {
		w.Write(appendRecord(b, r))
		io.WriteString(w, "\n")
		writeIDList(w, indent+"  compacted", r.CompactedEntryIDs)
		writeIDList(w, indent+"  retained", r.RetainedEntryIDs)
		return b
	}
	b = append(appendFact(b, f, indent), '\n')
	w.Write(b)
	return b
}

// spaces is more than any timeline prefix is wide.
var spaces = strings.Repeat(" ", 64)

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
	sums  []session.Usage
	index map[string]int // into order and sums
}

func (o *operationUsage) add(facts []session.Fact) {
	for _, f := range facts {
		if f.Usage == nil || f.Usage.AttemptID == "" {
			continue
		}
		i, seen := o.index[f.Usage.OperationID]
		if !seen {
			if o.index == nil {
				o.index = make(map[string]int)
			}
			// A copy, assigned once: the fact's id may be the file's
			// bytes, whose pages a long read gives back
			// (store.ReadSession), and a key is read again whenever a
			// lookup meets it or the map grows.
			id := strings.Clone(f.Usage.OperationID)
			i = len(o.order)
			o.index[id] = i
			o.order = append(o.order, id)
			o.sums = append(o.sums, session.Usage{})
		}
		s, u := &o.sums[i], f.Usage.Usage
		s.Input, s.Output, s.CacheRead, s.CacheWrite = s.Input+u.Input, s.Output+u.Output, s.CacheRead+u.CacheRead, s.CacheWrite+u.CacheWrite
	}
}

func (o *operationUsage) lines() []string {
	var out []string
	for i, id := range o.order {
		u := o.sums[i]
		out = append(out, fmt.Sprintf("model usage of operation %s: input %d, output %d, cacheRead %d, cacheWrite %d, cache hit %s", id, u.Input, u.Output, u.CacheRead, u.CacheWrite, cacheHit(u)))
	}
	return out
}
