package sessioncmd

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/store"
)

func NewVerifyCommand(a *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "verify <id|file>",
		Short: "Check a session's integrity and summarize it",
		Long: `Check that a session file is a valid session and summarize it: facts,
operations and their outcomes, token usage, the open operation, and
integrity (a torn tail is reported, not cut; committed lines are checked
against tiny-go's integrity records beside the session, so a line another
program rewrote, or lines cut off the end, are named).

The session is a file path, or a session id of the working directory.
Exit status 0 when valid, 1 when corrupt.`,
		Args: cmdutil.ExactArgs(1, "a session id or file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := Open(a, args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			v, err := verifySession(f)
			if err != nil {
				return cmdutil.UsageError{Err: PathError(f.Name(), err)}
			}
			writeVerify(a.Stdout, v)
			if v.c != nil {
				return cmdutil.ExitError{Code: cmdutil.ExitFailed}
			}
			return nil
		},
	}
}

// verified is what `session verify` found.
type verified struct {
	path string
	size int64 // bytes read
	st   *session.State
	c    *session.Corruption
	n    operationCounts // of the transactions before the corrupt line
	txs  int
}

// verifySession reduces the session in f, counts its operations and checks
// its integrity records in one streamed pass.
func verifySession(f *os.File) (verified, error) {
	v := verified{path: f.Name()}
	check, err := store.NewIntegrityCheck(v.path)
	if err != nil {
		return v, err
	}
	var hint int64
	if fi, err := f.Stat(); err == nil {
		hint = fi.Size()
	}
	count := func(lineNo int, facts []session.Fact) {
		v.txs++
		v.n.add(facts)
	}
	r, n, c, err := store.ReadSession(f, session.ReadHooks{Line: check.Line, Transaction: count})
	if err != nil {
		return v, err
	}
	v.size, v.c = n, c
	if c != nil {
		// The reducer stopped at the corrupt line: the rest was not read.
		v.size = max(n, hint)
		return v, nil
	}
	// The shared format is valid; is it what tiny-go committed?
	v.st = r.State()
	if v.c, err = check.Result(); err != nil || v.c == nil {
		return v, err
	}
	// A corruption the records found: count only what comes before it
	// (a second read, on this failure path only).
	v.n, v.txs = operationCounts{}, 0
	_, _, _, err = store.ReadSession(f, session.ReadHooks{Transaction: func(lineNo int, facts []session.Fact) {
		if lineNo < v.c.Line {
			count(lineNo, facts)
		}
	}})
	return v, err
}

func writeVerify(w io.Writer, v verified) {
	row := func(label, format string, args ...any) {
		fmt.Fprintf(w, "%-11s %s\n", label+":", fmt.Sprintf(format, args...))
	}
	st, c := v.st, v.c
	row("file", "%s (%d bytes)", v.path, v.size)
	if st != nil {
		h := st.Header
		row("session", "%s", h.ID)
		row("model", "%s %s", h.Provider, h.Model)
		row("created", "%s", FormatMillis(h.CreatedAt))
		row("cwd", "%s", h.Cwd)
	}
	n := v.n
	row("facts", "%d in %d transactions", n.facts, v.txs)
	open := 0
	if st != nil && st.Operation != nil {
		open = 1
	}
	row("operations", "%d (%d run, %d compaction): %d completed, %d aborted, %d failed, %d open",
		n.runs+n.compactions, n.runs, n.compactions, n.completed, n.aborted, n.failed, open)
	if st != nil {
		u := st.Usage
		row("usage", "input %d, output %d, cacheRead %d, cacheWrite %d", u.Input, u.Output, u.CacheRead, u.CacheWrite)
		row("open", "%s", DescribeOperation(st.Operation))
	}
	switch {
	case c != nil:
		row("integrity", "corrupt: %s", c.Describe())
	case v.size > st.RepairedLength:
		row("integrity", "ok; torn tail of %d bytes after byte %d (uncommitted; cut when the session is next opened for writing)",
			v.size-st.RepairedLength, st.RepairedLength)
	default:
		row("integrity", "ok")
	}
}

// DescribeOperation says in one line how the open operation stands.
func DescribeOperation(op *session.Operation) string {
	if op == nil {
		return "none (idle)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", op.Kind, op.OperationID)
	if s := op.Step; s != nil {
		fmt.Fprintf(&b, "; %s step %s attempt %d %s", s.StepKind, s.StepID, s.Attempt, s.Status)
	} else {
		b.WriteString("; no model request yet")
	}
	pending := 0
	for _, t := range op.ToolCalls {
		if t.Status == session.ToolPending {
			pending++
		}
	}
	if pending > 0 {
		fmt.Fprintf(&b, "; %d tool(s) started without result", pending)
	}
	if a := op.Assistant; a != nil {
		unanswered := 0
		for _, c := range a.Calls {
			if !c.Answered {
				unanswered++
			}
		}
		if unanswered > 0 {
			fmt.Fprintf(&b, "; %d of %d call(s) unanswered", unanswered, len(a.Calls))
		}
	}
	if op.AbortRequested {
		b.WriteString("; abort requested")
	}
	return b.String()
}

// FormatMillis renders a Unix millisecond time in UTC.
func FormatMillis(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z")
}
