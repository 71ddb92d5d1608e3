package agent

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// readCall is step n's call: a read of a.txt.
func readCall(n int) providertest.ToolCall {
	return call(providertest.LongTaskCallID(n), "read", `{"path":"a.txt"}`)
}

// overflow400 is OpenAI's context-overflow rejection.
var overflow400 = providertest.Reply{Status: 400, Body: `{"error":{"message":"This model's maximum context length is 1000 tokens. However, your messages resulted in 1204 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`}

const chainTail = "operationFinished:failed compactionStarted stepAttempt:compaction usage compaction operationFinished:completed user runStarted"

// A run whose last request passed the share of the window ends
// context_limit between steps, a compaction with a tool-round cut runs,
// and the continuation run finishes the task.
func TestRunCompactsBetweenStepsAndContinues(t *testing.T) {
	h := newHarness(t, nil, withAutoCompact(1000, 0.85))
	if err := os.WriteFile(h.path("a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, prompt := range []int64{300, 500, 700, 900} {
		h.server.Enqueue(providertest.Reply{ToolCalls: []providertest.ToolCall{readCall(i + 1)}, Usage: usage(prompt, 5)})
	}
	h.server.Enqueue(providertest.Reply{Text: "SUMMARY", Usage: usage(400, 5)}, providertest.Reply{Text: "all done", Usage: usage(350, 5)})
	res := h.run("do the task")
	if res.Outcome != session.OutcomeCompleted || res.Answer != "all done" || res.Kind != session.OperationRun {
		t.Fatalf("result %+v", res)
	}
	labels := h.labels()
	want := "user runStarted" + strings.Repeat(" stepAttempt:assistant assistant:toolUse usage toolStarted tool:success", 4) + " " + chainTail + " stepAttempt:assistant assistant:stop usage operationFinished:completed"
	if labels != want {
		t.Fatalf("facts\n got: %s\nwant: %s", labels, want)
	}
	st := h.reduce()
	if !st.Idle() || st.ContinuationOwed {
		t.Fatalf("state: idle %v, owed %v", st.Idle(), st.ContinuationOwed)
	}
	// The run's terminal and the compaction's partition.
	var fin, started map[string]any
	for _, f := range h.facts() {
		switch f.label() {
		case "operationFinished:failed":
			fin = f.Record
		case "compactionStarted":
			started = f.Record
		}
	}
	if e := fin["error"].(map[string]any); e["code"] != "context_limit" || e["message"] != "context window full; continuing after compaction" {
		t.Fatalf("run terminal %v", fin)
	}
	if n := len(started["compactedEntryIds"].([]any)); n != 3 {
		t.Fatalf("compacted %d entries, want 3 (user, call 1, result 1)", n)
	}
	// The summary request: no tools, the exact system prompt, the
	// summarized messages; the continuation request: summary, the tool
	// rounds kept, the continuation prompt.
	reqs := h.server.Requests()
	sum := reqs[4].Chat
	if len(sum.Tools) != 0 || *sum.Messages[0].Content != SummarySystemPrompt || !strings.Contains(*sum.Messages[1].Content, "do the task") {
		t.Fatalf("summary request %+v", sum)
	}
	cont := reqs[5].Chat.Messages
	if *cont[1].Content != CompactedHistoryPrefix+"SUMMARY" || cont[2].Role != "assistant" || *cont[len(cont)-1].Content != ContinuePrompt {
		t.Fatalf("continuation context %+v", cont)
	}
	if got := strings.Join(h.obs.events, " "); !strings.Contains(got, "operation.completed:run:failed operation.started:compaction") ||
		!strings.Contains(got, "operation.completed:compaction:completed operation.started:run") {
		t.Fatalf("events %s", got)
	}
}

// The provider rejecting the next request as too long closes the attempt
// and starts the chain; the user still gets the answer.
func TestProviderOverflowCompactsAndContinues(t *testing.T) {
	h := newHarness(t, nil, withAutoCompact(100000, 0.85))
	if err := os.WriteFile(h.path("a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		h.server.Enqueue(calls(readCall(i + 1)))
	}
	h.server.Enqueue(overflow400, text("SUMMARY"), text("finished"))
	res := h.run("do the task")
	if res.Outcome != session.OutcomeCompleted || res.Answer != "finished" {
		t.Fatalf("result %+v", res)
	}
	want := "stepAttempt:assistant stepFailed:model_error " + chainTail + " stepAttempt:assistant assistant:stop usage operationFinished:completed"
	if !strings.HasSuffix(h.labels(), want) {
		t.Fatalf("facts %s", h.labels())
	}
}

// An overflow with nothing to compact fails the run as a model error,
// and an overflow of the continuation's first request does not loop.
func TestOverflowWithoutCutFails(t *testing.T) {
	h := newHarness(t, []providertest.Reply{overflow400}, withAutoCompact(100000, 0.85))
	res := h.run("huge prompt")
	if res.Outcome != session.OutcomeFailed || res.Error.Code != session.CodeModelError || !strings.Contains(res.Error.Message, "maximum context length") {
		t.Fatalf("result %+v", res)
	}

	h = newHarness(t, nil, withAutoCompact(100000, 0.85))
	if err := os.WriteFile(h.path("a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		h.server.Enqueue(calls(readCall(i + 1)))
	}
	h.server.Enqueue(overflow400, text("SUMMARY"), overflow400)
	res = h.run("do the task")
	if res.Outcome != session.OutcomeFailed || res.Error.Code != session.CodeModelError {
		t.Fatalf("result %+v", res)
	}
	if n := strings.Count(h.labels(), "compactionStarted"); n != 1 {
		t.Fatalf("%d compactions, want 1", n)
	}
}

// A process that stops after the compaction owes the continuation: the
// next process starts it on resume, once.
func TestContinuationOwedAcrossProcesses(t *testing.T) {
	failContinuation := func(l Log) Log { return &failingLog{Log: l, fail: isContinuationAccept} }
	h := newHarness(t, nil, withAutoCompact(100000, 0.85), withLog(failContinuation))
	if err := os.WriteFile(h.path("a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		h.server.Enqueue(calls(readCall(i + 1)))
	}
	h.server.Enqueue(overflow400, text("SUMMARY"))
	if _, err := h.agent.Run(context.Background(), "do the task"); err == nil {
		t.Fatal("Run: want the injected commit failure")
	}
	st := h.reduce()
	if !st.Idle() || !st.ContinuationOwed {
		t.Fatalf("after the compaction: idle %v owed %v", st.Idle(), st.ContinuationOwed)
	}
	h.reopen()
	if !h.agent.Pending() {
		t.Fatal("a new process does not see the owed continuation")
	}
	h.server.Enqueue(text("finished after restart"))
	res, err := h.agent.Resume(context.Background())
	if err != nil || res.Answer != "finished after restart" {
		t.Fatalf("Resume = %+v, %v", res, err)
	}
	size := len(h.bytes())
	if res, err := h.agent.Resume(context.Background()); err != nil || len(h.bytes()) != size {
		t.Fatalf("second resume: %+v, %v, appended %d bytes", res, err, len(h.bytes())-size)
	}
}

// failingLog fails the commits that fail selects, as a crash before them
// would leave the file.
type failingLog struct {
	Log
	fail func([]session.Fact) bool
}

func (l *failingLog) Commit(ctx context.Context, facts []session.Fact) ([]session.Fact, error) {
	if l.fail(facts) {
		return nil, errors.New("injected crash")
	}
	return l.Log.Commit(ctx, facts)
}

func isContinuationAccept(facts []session.Fact) bool {
	u, ok := facts[0].Entry.(*session.UserEntry)
	return ok && u.Content == ContinuePrompt
}

// Esc in each phase of the chain aborts that operation and ends the chain.
func TestEscEndsTheChainInEachPhase(t *testing.T) {
	hang := providertest.Reply{Hang: true}
	cases := []struct {
		name string
		// replies after the four tool rounds; the one that hangs is where
		// Esc lands.
		replies []providertest.Reply
		gap     bool
		want    string // facts at the end
		kind    session.OperationKind
	}{
		{"step", []providertest.Reply{hang}, false, "stepAttempt:assistant abortRequested:model stepFailed:aborted operationFinished:aborted", session.OperationRun},
		{"compaction", []providertest.Reply{overflow400, hang}, false, "compactionStarted stepAttempt:compaction abortRequested:compact stepFailed:aborted operationFinished:aborted", session.OperationCompaction},
		{"between compaction and continuation", []providertest.Reply{overflow400, text("SUMMARY")}, true, "compaction operationFinished:completed", session.OperationRun},
		{"continuation", []providertest.Reply{overflow400, text("SUMMARY"), hang}, false, "user runStarted stepAttempt:assistant abortRequested:model stepFailed:aborted operationFinished:aborted", session.OperationRun},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil, withAutoCompact(100000, 0.85))
			if err := os.WriteFile(h.path("a.txt"), []byte("alpha\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			for i := range 4 {
				h.server.Enqueue(calls(readCall(i + 1)))
			}
			h.server.Enqueue(tc.replies...)
			hung := 4 + len(tc.replies) - 1
			if tc.gap {
				// Esc right after the compaction's terminal, before the
				// continuation is accepted.
				h.agent.cfg.Events = func(ev Event) {
					if oc, ok := ev.(OperationCompleted); ok && oc.Result.Kind == session.OperationCompaction {
						if ok, err := h.agent.Abort(context.Background()); !ok || err != nil {
							t.Errorf("Abort in the gap = %v, %v", ok, err)
						}
					}
				}
				h.agent.sink = h.agent.cfg.Events
			} else {
				go func() {
					select {
					case <-waitRequest(h.server, hung):
					case <-time.After(10 * time.Second):
						return
					}
					if ok, err := h.agent.Abort(context.Background()); !ok || err != nil {
						t.Errorf("Abort = %v, %v", ok, err)
					}
				}()
			}
			res := h.run("do the task")
			if res.Outcome != session.OutcomeAborted || res.Kind != tc.kind {
				t.Fatalf("result %+v", res)
			}
			if !strings.HasSuffix(h.labels(), tc.want) {
				t.Fatalf("facts %s\nwant suffix %s", h.labels(), tc.want)
			}
			st := h.reduce()
			if !st.Idle() {
				t.Fatal("not idle")
			}
			if h.agent.Pending() {
				t.Fatal("the chain goes on after Esc")
			}
			// The next prompt is an ordinary run (no continuation first).
			h.server.Enqueue(text("next answer"))
			if res := h.run("next"); res.Answer != "next answer" {
				t.Fatalf("next run %+v", res)
			}
			if strings.Count(h.labels(), "user runStarted") != 1+strings.Count(tc.want, "user runStarted")+1 {
				t.Fatalf("facts %s", h.labels())
			}
		})
	}
}

// waitRequest is closed once request i arrived.
func waitRequest(srv *providertest.Server, i int) <-chan struct{} {
	c := make(chan struct{})
	go func() {
		for len(srv.Requests()) <= i {
			time.Sleep(2 * time.Millisecond)
		}
		close(c)
	}()
	return c
}

// A process that stops before the run's end for a compaction is committed
// leaves a run whose next step is due; the next process sees the share
// passed (from the last usage in the file) and takes the chain from there.
func TestShareTriggerSurvivesRestart(t *testing.T) {
	endForCompaction := func(facts []session.Fact) bool {
		for _, f := range facts {
			if _, ok := f.Record.(*session.CompactionStarted); ok {
				return true
			}
		}
		return false
	}
	h := newHarness(t, nil, withAutoCompact(1000, 0.85), withLog(func(l Log) Log { return &failingLog{Log: l, fail: endForCompaction} }))
	if err := os.WriteFile(h.path("a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, prompt := range []int64{300, 500, 700, 900} {
		h.server.Enqueue(providertest.Reply{ToolCalls: []providertest.ToolCall{readCall(i + 1)}, Usage: usage(prompt, 5)})
	}
	if _, err := h.agent.Run(context.Background(), "do the task"); err == nil {
		t.Fatal("Run: want the injected commit failure")
	}
	if st := h.reduce(); st.Operation == nil || st.Operation.Kind != session.OperationRun {
		t.Fatal("the run is not open")
	}
	h.reopen(withAutoCompact(1000, 0.85))
	h.server.Enqueue(text("SUMMARY"), text("all done"))
	res, err := h.agent.Resume(context.Background())
	if err != nil || res.Answer != "all done" {
		t.Fatalf("Resume = %+v, %v", res, err)
	}
	if !strings.HasSuffix(h.labels(), "tool:success "+chainTail+" stepAttempt:assistant assistant:stop usage operationFinished:completed") {
		t.Fatalf("facts %s", h.labels())
	}
}
