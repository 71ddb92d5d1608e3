package session_test

import (
	"testing"

	s "github.com/tiny-agent/tiny-go/internal/session"
	st "github.com/tiny-agent/tiny-go/internal/session/sessiontest"
)

// The continuation of runtime.md §4 is owed exactly when the last two
// operations are a context_limit run and a completed compaction, and no
// operation started since.
func TestContinuationOwed(t *testing.T) {
	contextLimit := &s.ErrorInfo{Code: s.CodeContextLimit, Message: "context window full; continuing after compaction"}
	// history builds two finished turns, then a run that ends with e.
	history := func(e *s.ErrorInfo) *st.Builder {
		r := startRun("first")
		r.reply(s.StopReasonStop, "one")
		r.finish()
		r2 := startRunOn(r.b, "second")
		r2.reply(s.StopReasonStop, "two")
		r2.finish()
		r3 := startRunOn(r.b, "third")
		r3.reply(s.StopReasonToolUse, "", call1)
		r.b.Commit(st.Synthetic(r3.step, r.b.Boundary(), 0, call1, s.ReasonUnknownTool))
		r.b.Commit(st.Finished(r3.op, s.OperationRun, s.OutcomeFailed, "", "", e))
		return r.b
	}
	owed := func(t *testing.T, b *st.Builder) bool {
		t.Helper()
		state, c := s.Reduce(b.Bytes())
		if c != nil {
			t.Fatalf("does not reduce: %v", c)
		}
		return state.ContinuationOwed
	}

	b := history(contextLimit)
	if owed(t, b) {
		t.Fatal("owed before the compaction")
	}
	if !b.Compact("SUMMARY", 2, s.Usage{Input: 5}) {
		t.Fatal("nothing to compact")
	}
	if !owed(t, b) {
		t.Fatal("not owed after a context_limit run and its compaction")
	}
	startRunOn(b, "Continue the task. The work so far is summarized above.")
	if owed(t, b) {
		t.Fatal("still owed once the continuation started")
	}

	b = history(&s.ErrorInfo{Code: s.CodeModelError, Message: "provider request failed"})
	b.Compact("SUMMARY", 2, s.Usage{Input: 5})
	if owed(t, b) {
		t.Fatal("owed after an ordinary failure")
	}
}
