package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// history runs n prompts "q<i>" answered "a<i>".
func (h *harness) history(from, n int) {
	h.t.Helper()
	for i := from; i < from+n; i++ {
		h.server.Enqueue(text(fmt.Sprintf("a%d %s", i, strings.Repeat("x", 40))))
		h.run(fmt.Sprintf("q%d %s", i, strings.Repeat("y", 40)))
	}
}

func (h *harness) compact() (Result, CompactStats) {
	h.t.Helper()
	res, stats, err := h.agent.Compact(context.Background())
	if err != nil {
		h.t.Fatalf("Compact: %v", err)
	}
	return res, stats
}

func TestCompaction(t *testing.T) {
	h := newHarness(t, nil)
	h.history(1, 4)
	h.server.Enqueue(providertest.Reply{Text: "SUMMARY-1", Usage: usage(50, 5)})
	res, stats := h.compact()
	if res.Outcome != session.OutcomeCompleted || res.Kind != session.OperationCompaction {
		t.Fatalf("result = %+v", res)
	}
	if stats.Compacted != 2 || stats.Kept != 6 {
		t.Fatalf("stats = %+v, want 2 compacted, 6 kept", stats)
	}
	labels := h.labels()
	if !strings.HasSuffix(labels, "compactionStarted stepAttempt:compaction usage compaction operationFinished:completed") {
		t.Fatalf("facts: %s", labels)
	}
	// The summary request: fixed system prompt, the summarized messages as
	// a JSON array, no tools.
	req := h.server.Requests()[len(h.server.Requests())-1].Chat
	if len(req.Tools) != 0 || len(req.Messages) != 2 || *req.Messages[0].Content != SummarySystemPrompt {
		t.Fatalf("summary request: %+v", req)
	}
	var summarized []session.Message
	if err := json.Unmarshal([]byte(*req.Messages[1].Content), &summarized); err != nil {
		t.Fatal(err)
	}
	if len(summarized) != 2 || !strings.HasPrefix(*summarized[0].Content, "q1") || !strings.HasPrefix(*summarized[1].Content, "a1") {
		t.Fatalf("summarized: %+v", summarized)
	}
	// The durable partition and digest satisfy the reducer, and the active
	// context is the summary, then the retained tail.
	st := h.reduce()
	if len(st.Transcript) != 8 {
		t.Fatalf("transcript has %d messages; history must not be deleted", len(st.Transcript))
	}
	if len(st.ActiveContext) != 7 || *st.ActiveContext[0].Content != CompactedHistoryPrefix+"SUMMARY-1" || !strings.HasPrefix(*st.ActiveContext[1].Content, "q2") {
		t.Fatalf("active context: %+v", st.ActiveContext)
	}
	var started map[string]any
	for _, f := range h.facts() {
		if f.Kind == "record" && f.Record["type"] == "compactionStarted" {
			started = f.Record
		}
	}
	if n := len(started["compactedEntryIds"].([]any)); n != 2 {
		t.Fatalf("compactedEntryIds: %v", started["compactedEntryIds"])
	}
	if n := len(started["retainedEntryIds"].([]any)); n != 6 {
		t.Fatalf("retainedEntryIds: %v", started["retainedEntryIds"])
	}
	// The next run sends the compacted context.
	h.server.Enqueue(text("a5"))
	h.run("q5")
	next := h.server.Requests()[len(h.server.Requests())-1].Chat.Messages
	if len(next) != 1+7+1 || *next[1].Content != CompactedHistoryPrefix+"SUMMARY-1" {
		t.Fatalf("request after compaction has %d messages: %+v", len(next), next)
	}
}

func TestRepeatedCompactionSummarizesThePriorSummary(t *testing.T) {
	h := newHarness(t, nil)
	h.history(1, 4)
	h.server.Enqueue(text("SUMMARY-1"))
	h.compact()
	h.history(5, 3)
	h.server.Enqueue(text("SUMMARY-2"))
	_, stats := h.compact()
	req := h.server.Requests()[len(h.server.Requests())-1].Chat
	var summarized []session.Message
	if err := json.Unmarshal([]byte(*req.Messages[1].Content), &summarized); err != nil {
		t.Fatal(err)
	}
	if *summarized[0].Content != CompactedHistoryPrefix+"SUMMARY-1" {
		t.Fatalf("the prior summary is not part of the input: %+v", summarized[0])
	}
	if stats.Compacted != len(summarized) {
		t.Fatalf("stats %+v vs %d summarized", stats, len(summarized))
	}
	st := h.reduce()
	if *st.ActiveContext[0].Content != CompactedHistoryPrefix+"SUMMARY-2" || len(st.ActiveContext) != 7 {
		t.Fatalf("active context: %+v", st.ActiveContext)
	}
	// The prior summary is not a source entry: every listed id is a real
	// entry of this file.
	ids := map[string]bool{}
	for _, f := range h.facts() {
		ids[f.ID] = true
	}
	for _, f := range h.facts() {
		if f.Kind == "record" && f.Record["type"] == "compactionStarted" {
			for _, key := range []string{"compactedEntryIds", "retainedEntryIds"} {
				for _, id := range f.Record[key].([]any) {
					if !ids[id.(string)] {
						t.Fatalf("%s lists %v, which is not an entry", key, id)
					}
				}
			}
		}
	}
}

// After compaction the size of the next request does not depend on how long
// the history was.
func TestCompactionBoundsTheNextRequest(t *testing.T) {
	sizeAfter := func(runs int) int {
		h := newHarness(t, nil)
		h.history(1, runs)
		h.server.Enqueue(text("SUMMARY"))
		h.compact()
		h.server.Enqueue(text("next"))
		h.run("next prompt")
		reqs := h.server.Requests()
		return len(reqs[len(reqs)-1].Body)
	}
	short, long := sizeAfter(5), sizeAfter(40)
	// Only the digits of the retained prompts differ ("q3" vs "q38").
	if diff := long - short; diff < 0 || diff > 16 {
		t.Fatalf("request after compaction: %d bytes for 5 runs, %d for 40", short, long)
	}
}

func TestNothingToCompact(t *testing.T) {
	t.Run("too short", func(t *testing.T) {
		h := newHarness(t, nil)
		h.history(1, 3)
		before := h.bytes()
		if _, _, err := h.agent.Compact(context.Background()); !errors.Is(err, ErrNothingToCompact) {
			t.Fatalf("err = %v", err)
		}
		if string(h.bytes()) != string(before) {
			t.Fatal("a refused compaction wrote facts")
		}
		if ErrNothingToCompact.Error() != "Nothing to compact." {
			t.Fatal("wrong refusal text")
		}
	})
	t.Run("no user boundary", func(t *testing.T) {
		replies := []providertest.Reply{}
		for i := 0; i < 5; i++ {
			replies = append(replies, calls(call(fmt.Sprintf("c%d", i), "bash", `{"command":"true"}`)))
		}
		h := newHarness(t, append(replies, text("done")))
		h.run("one long turn")
		before := h.bytes()
		if _, _, err := h.agent.Compact(context.Background()); !errors.Is(err, ErrNothingToCompact) {
			t.Fatalf("err = %v", err)
		}
		if string(h.bytes()) != string(before) {
			t.Fatal("a refused compaction wrote facts")
		}
	})
}

func TestAbortCompaction(t *testing.T) {
	var h *harness
	checked := false
	var summaryRequest int
	hk := &hooks{AfterAbortCommitted: func() {
		if !h.durableAbort() {
			t.Error("abortRequested is not durable when the summary request is cancelled")
		}
		select {
		case <-h.server.Disconnected(summaryRequest):
			t.Error("the transport saw the cancellation before the abort was durable")
		default:
		}
		checked = true
	}}
	h = newHarness(t, nil, withHooks(hk))
	h.history(1, 4)
	summaryRequest = len(h.server.Requests())
	before := h.reduce().ActiveContext
	h.server.Enqueue(providertest.Reply{Hang: true})
	n := len(h.server.Requests())
	done := make(chan Result, 1)
	go func() {
		res, _, err := h.agent.Compact(context.Background())
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	waitFor(t, "the summary request", func() bool { return len(h.server.Requests()) == n+1 })
	if ok, err := h.agent.Abort(context.Background()); !ok || err != nil {
		t.Fatalf("Abort = %v, %v", ok, err)
	}
	res := wait(t, done)
	if res.Outcome != session.OutcomeAborted || res.Kind != session.OperationCompaction || !checked {
		t.Fatalf("result = %+v, ordering checked = %v", res, checked)
	}
	select {
	case <-h.server.Disconnected(summaryRequest):
	case <-time.After(2 * time.Second):
		t.Fatal("the summary request was not cancelled")
	}
	if !strings.HasSuffix(h.labels(), "compactionStarted stepAttempt:compaction abortRequested:compact stepFailed:aborted operationFinished:aborted") {
		t.Fatalf("facts: %s", h.labels())
	}
	if got := h.reduce().ActiveContext; len(got) != len(before) {
		t.Fatalf("an aborted compaction changed the active context: %d -> %d", len(before), len(got))
	}
}

// crashLog fails the n-th commit (counting from 1) without writing it, as if
// the process died just before that commit.
type crashLog struct {
	Log
	n, at int
}

var errCrash = errors.New("simulated crash")

func (c *crashLog) Commit(ctx context.Context, facts []session.Fact) ([]session.Fact, error) {
	c.n++
	if c.n == c.at {
		return nil, errCrash
	}
	return c.Log.Commit(ctx, facts)
}

func crashAt(n int) harnessOption {
	return withLog(func(l Log) Log { return &crashLog{Log: l, at: n} })
}

// Every prefix of a compaction recovers: no attempt, open attempt 1, open
// attempt 2, and an entry without its terminal (which needs no model call).
func TestCompactionRecoveryPrefixes(t *testing.T) {
	cases := []struct {
		name       string
		crashes    []int // commit numbers (from compactionStarted = 1) to fail, one process each
		requests   int   // summary requests expected in the final resume
		wantSuffix string
	}{
		{"no attempt", []int{2}, 1, "compactionStarted stepAttempt:compaction usage compaction operationFinished:completed"},
		{"open attempt 1", []int{3}, 1, "compactionStarted stepAttempt:compaction stepAttempt:compaction usage compaction operationFinished:completed"},
		{"open attempt 2", []int{3, 2}, 0, "compactionStarted stepAttempt:compaction stepAttempt:compaction stepFailed:attempts_exhausted operationFinished:failed"},
		{"entry without terminal", []int{4}, 0, "compactionStarted stepAttempt:compaction usage compaction operationFinished:completed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.history(1, 4)
			for i, at := range c.crashes {
				h.reopen(crashAt(at))
				h.server.Enqueue(text("SUMMARY"))
				var err error
				if i == 0 {
					_, _, err = h.agent.Compact(context.Background())
				} else {
					_, err = h.agent.Resume(context.Background())
				}
				if !errors.Is(err, errCrash) {
					t.Fatalf("process %d: err = %v, want the simulated crash", i+1, err)
				}
			}
			h.reopen()
			before := len(h.server.Requests())
			h.server.Enqueue(text("SUMMARY"))
			if _, err := h.agent.Resume(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := len(h.server.Requests()) - before; got != c.requests {
				t.Fatalf("resume sent %d summary requests, want %d", got, c.requests)
			}
			if !strings.HasSuffix(h.labels(), c.wantSuffix) {
				t.Fatalf("facts: %s\nwant suffix %s", h.labels(), c.wantSuffix)
			}
			if !h.reduce().Idle() {
				t.Fatal("not idle after resume")
			}
			end := h.bytes()
			h.reopen()
			if _, err := h.agent.Resume(context.Background()); err != nil {
				t.Fatal(err)
			}
			if string(h.bytes()) != string(end) {
				t.Fatal("a second resume appended bytes")
			}
		})
	}
}

func TestAutomaticCompaction(t *testing.T) {
	h := newHarness(t, nil, withAutoCompact(1000, 0.85))
	h.history(1, 3)
	h.server.Enqueue(providertest.Reply{Text: "a4", Usage: usage(900, 3)})
	h.run("q4")
	h.server.Enqueue(text("AUTO-SUMMARY"), text("a5"))
	res := h.run("q5")
	if res.Outcome != session.OutcomeCompleted {
		t.Fatalf("result = %+v", res)
	}
	labels := h.labels()
	i := strings.LastIndex(labels, "compactionStarted")
	j := strings.LastIndex(labels, "user runStarted")
	if i < 0 || j < i {
		t.Fatalf("no compaction before the run: %s", labels)
	}
	last := h.server.Requests()[len(h.server.Requests())-1].Chat.Messages
	if *last[1].Content != CompactedHistoryPrefix+"AUTO-SUMMARY" {
		t.Fatalf("the run did not use the compacted context: %+v", last[1])
	}
}

func TestAutomaticCompactionDoesNotLoopWithoutBoundary(t *testing.T) {
	h := newHarness(t, nil, withAutoCompact(1000, 0.85))
	h.server.Enqueue(providertest.Reply{Text: "a1", Usage: usage(990, 3)})
	h.run("q1")
	h.server.Enqueue(providertest.Reply{Text: "a2", Usage: usage(995, 3)})
	res := h.run("q2")
	if res.Outcome != session.OutcomeCompleted || strings.Contains(h.labels(), "compaction") {
		t.Fatalf("result = %+v, facts %s", res, h.labels())
	}
}

// Esc during an automatic compaction stops there: the prompt is not
// accepted and no run starts.
func TestAbortedAutomaticCompactionStopsTheRun(t *testing.T) {
	h := newHarness(t, nil, withAutoCompact(1000, 0.85))
	h.history(1, 3)
	h.server.Enqueue(providertest.Reply{Text: "a4", Usage: usage(900, 3)})
	h.run("q4")
	h.server.Enqueue(providertest.Reply{Hang: true})
	n := len(h.server.Requests())
	done := h.runAsync("q5")
	waitFor(t, "the summary request", func() bool { return len(h.server.Requests()) == n+1 })
	if ok, err := h.agent.Abort(context.Background()); !ok || err != nil {
		t.Fatalf("Abort = %v, %v", ok, err)
	}
	res := wait(t, done)
	if res.Kind != session.OperationCompaction || res.Outcome != session.OutcomeAborted {
		t.Fatalf("result = %+v", res)
	}
	if strings.Contains(string(h.bytes()), "q5") {
		t.Fatal("the prompt was accepted after an aborted compaction")
	}
}

// An Esc that lands between the compaction entry and its terminal is not
// dropped: the terminal goes through the abort check and the operation
// ends aborted.
func TestAbortBeforeCompactionTerminal(t *testing.T) {
	var h *harness
	fired := false
	hk := &hooks{BeforeSettle: func() {
		op := h.agent.cfg.Log.State().Operation
		if !fired && op != nil && op.Kind == session.OperationCompaction && op.CompactionEntryWritten {
			fired = true
			if ok, err := h.agent.Abort(context.Background()); !ok || err != nil {
				t.Errorf("Abort = %v, %v", ok, err)
			}
		}
	}}
	h = newHarness(t, nil, withHooks(hk))
	h.history(1, 4)
	h.server.Enqueue(text("SUMMARY"))
	res, _, err := h.agent.Compact(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !fired || res.Outcome != session.OutcomeAborted {
		t.Fatalf("fired=%v result=%+v", fired, res)
	}
	if !strings.HasSuffix(h.labels(), "compaction abortRequested:compact operationFinished:aborted") {
		t.Fatalf("facts: %s", h.labels())
	}
	if !h.reduce().Idle() {
		t.Fatal("not idle")
	}
}

// The automatic-compaction decision survives a restart: a new process
// compacts before the next run when the last request was over the share.
func TestAutomaticCompactionAfterRestart(t *testing.T) {
	h := newHarness(t, nil, withAutoCompact(1000, 0.85))
	h.history(1, 3)
	h.server.Enqueue(providertest.Reply{Text: "a4", Usage: usage(900, 3)})
	h.run("q4")
	h.reopen(withAutoCompact(1000, 0.85))
	h.server.Enqueue(providertest.Reply{Text: "SUMMARY", Usage: usage(5000, 3)}, text("a5"), text("a6"))
	h.run("q5")
	if n := strings.Count(h.labels(), "compactionStarted"); n != 1 {
		t.Fatalf("%d compactions after restart, want 1", n)
	}
	// The summary request's own (large) prompt does not trigger another.
	h.run("q6")
	if n := strings.Count(h.labels(), "compactionStarted"); n != 1 {
		t.Fatalf("%d compactions, want 1: the summary size must not count", n)
	}
}
