package agent

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"

	"github.com/tiny-agent/tiny-go/internal/testenv"
)

// runAsync starts Run in a goroutine and returns a channel with its result.
func (h *harness) runAsync(prompt string) <-chan Result {
	ch := make(chan Result, 1)
	go func() {
		res, err := h.agent.Run(context.Background(), prompt)
		if err != nil {
			h.t.Errorf("Run: %v", err)
		}
		ch <- res
	}()
	return ch
}

func wait(t *testing.T, ch <-chan Result) Result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(15 * time.Second):
		t.Fatal("operation did not end")
		return Result{}
	}
}

// durableAbort reports whether abortRequested is in the file on disk.
func (h *harness) durableAbort() bool {
	st, c := session.Reduce(h.bytes())
	return c == nil && st.Operation != nil && st.Operation.AbortRequested
}

func TestAbortModelPhase(t *testing.T) {
	var h *harness
	var checked bool
	hk := &hooks{AfterAbortCommitted: func() {
		// Durable before any signal: the file has the abort and the
		// provider has not seen the cancellation yet.
		if !h.durableAbort() {
			t.Error("abortRequested is not durable when the phase is signalled")
		}
		select {
		case <-h.server.Disconnected(0):
			t.Error("the transport saw the cancellation before the abort was durable")
		default:
		}
		checked = true
	}}
	h = newHarness(t, []providertest.Reply{{Text: "streaming forever", ChunkSize: 3, Hang: true, After: 2}}, withHooks(hk))
	done := h.runAsync("talk")
	waitFor(t, "the model request", func() bool { return len(h.server.Requests()) == 1 })
	if ok, err := h.agent.Abort(context.Background()); !ok || err != nil {
		t.Fatalf("Abort = %v, %v", ok, err)
	}
	res := wait(t, done)
	if res.Outcome != session.OutcomeAborted || !checked {
		t.Fatalf("result = %+v, checked = %v", res, checked)
	}
	select {
	case <-h.server.Disconnected(0):
	case <-time.After(2 * time.Second):
		t.Fatal("the HTTP request was not cancelled")
	}
	want := "user runStarted stepAttempt:assistant abortRequested:model stepFailed:aborted operationFinished:aborted"
	if got := h.labels(); got != want {
		t.Fatalf("facts:\n got %s\nwant %s", got, want)
	}
}

// alive reports whether pid names a live (non-zombie) process.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(fields) > 0 && fields[0] != "Z"
}

func readPID(t *testing.T, path string) int {
	t.Helper()
	var pid int
	waitFor(t, path, func() bool {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil && pid > 0
	})
	return pid
}

func TestAbortToolPhaseKillsTheGroup(t *testing.T) {
	commands := map[string]string{
		"background and wait": `sleep 30 & echo $! > child.pid; wait`,
		"pipeline":            `sh -c 'echo $$ > child.pid; exec sleep 30' | cat`,
		"ignores TERM":        `trap '' TERM; sh -c 'trap "" TERM; echo $$ > child.pid; while :; do sleep 1; done'`,
	}
	for name, command := range commands {
		t.Run(name, func(t *testing.T) {
			var h *harness
			var pid int
			hk := &hooks{AfterAbortCommitted: func() {
				if !h.durableAbort() {
					t.Error("abortRequested is not durable when the process group is signalled")
				}
				if !alive(pid) {
					t.Error("the child died before the abort was durable")
				}
			}}
			h = newHarness(t, []providertest.Reply{
				calls(call("c1", "bash", `{"command":`+strconv.Quote(command)+`}`), call("c2", "read", `{"path":"x"}`)),
			}, withHooks(hk))
			done := h.runAsync("deploy")
			pid = readPID(t, h.path("child.pid"))
			began := time.Now()
			if ok, err := h.agent.Abort(context.Background()); !ok || err != nil {
				t.Fatalf("Abort = %v, %v", ok, err)
			}
			res := wait(t, done)
			if res.Outcome != session.OutcomeAborted {
				t.Fatalf("result = %+v", res)
			}
			waitFor(t, "the child to die", func() bool { return !alive(pid) })
			if d := time.Since(began); d > testenv.Scale(time.Second) {
				t.Fatalf("the process group took %v to go", d)
			}
			want := "user runStarted stepAttempt:assistant assistant:toolUse usage toolStarted abortRequested:tool synthetic:interrupted synthetic:aborted operationFinished:aborted"
			if got := h.labels(); got != want {
				t.Fatalf("facts:\n got %s\nwant %s", got, want)
			}
			facts := h.facts()
			if call := facts[len(facts)-4].Record["toolCallId"]; call != "c1" {
				t.Fatalf("abort names tool call %v", call)
			}
		})
	}
}

func TestAbortIdleDoesNothing(t *testing.T) {
	h := newHarness(t, []providertest.Reply{text("hi")})
	h.run("hello")
	before := h.bytes()
	if ok, err := h.agent.Abort(context.Background()); ok || err != nil {
		t.Fatalf("Abort on idle = %v, %v", ok, err)
	}
	if string(h.bytes()) != string(before) {
		t.Fatal("abort of an idle session wrote something")
	}
}

func TestDoubleAbortIsHarmless(t *testing.T) {
	h := newHarness(t, []providertest.Reply{calls(call("c1", "bash", `{"command":"echo $$ > child.pid; exec sleep 30"}`))})
	done := h.runAsync("go")
	readPID(t, h.path("child.pid"))
	var wg sync.WaitGroup
	oks := make([]bool, 3)
	for i := range oks {
		wg.Go(func() {
			ok, err := h.agent.Abort(context.Background())
			if err != nil {
				t.Error(err)
			}
			oks[i] = ok
		})
	}
	wg.Wait()
	res := wait(t, done)
	if res.Outcome != session.OutcomeAborted {
		t.Fatalf("result = %+v", res)
	}
	if n := strings.Count(h.labels(), "abortRequested"); n != 1 {
		t.Fatalf("%d abortRequested facts", n)
	}
	if ok, _ := h.agent.Abort(context.Background()); ok {
		t.Fatal("abort after the end reported success")
	}
	accepted := 0
	for _, ok := range oks {
		if ok {
			accepted++
		}
	}
	if accepted != 1 {
		t.Fatalf("%d aborts reported as accepted", accepted)
	}
}

// An abort that arrives between phases (after the assistant entry, before
// the first tool) still takes effect: nothing runs.
func TestAbortBetweenPhases(t *testing.T) {
	var h *harness
	fired := false
	hk := &hooks{BetweenPhases: func() {
		op := h.agent.cfg.Log.State().Operation
		if !fired && op != nil && op.Assistant != nil && len(op.ToolCalls) == 0 {
			fired = true
			if ok, err := h.agent.Abort(context.Background()); !ok || err != nil {
				t.Errorf("Abort = %v, %v", ok, err)
			}
		}
	}}
	h = newHarness(t, []providertest.Reply{
		calls(call("c1", "bash", `{"command":"touch ran"}`), call("c2", "bash", `{"command":"touch ran2"}`)),
	}, withHooks(hk))
	res := h.run("go")
	if res.Outcome != session.OutcomeAborted {
		t.Fatalf("result = %+v", res)
	}
	want := "user runStarted stepAttempt:assistant assistant:toolUse usage abortRequested:model synthetic:aborted synthetic:aborted operationFinished:aborted"
	if got := h.labels(); got != want {
		t.Fatalf("facts:\n got %s\nwant %s", got, want)
	}
	if _, err := os.Stat(h.path("ran")); err == nil {
		t.Fatal("a tool ran after the abort")
	}
}

// Abort first: the reply is already in memory, but abortRequested reaches
// the commit point first, so the reply is discarded.
func TestAbortRaceModelAbortFirst(t *testing.T) {
	var h *harness
	once := sync.Once{}
	hk := &hooks{BeforeSettle: func() {
		once.Do(func() {
			if ok, err := h.agent.Abort(context.Background()); !ok || err != nil {
				t.Errorf("Abort = %v, %v", ok, err)
			}
		})
	}}
	h = newHarness(t, []providertest.Reply{text("a late answer")}, withHooks(hk))
	res := h.run("go")
	if res.Outcome != session.OutcomeAborted {
		t.Fatalf("result = %+v", res)
	}
	want := "user runStarted stepAttempt:assistant abortRequested:model stepFailed:aborted operationFinished:aborted"
	if got := h.labels(); got != want {
		t.Fatalf("facts:\n got %s\nwant %s", got, want)
	}
	if strings.Contains(string(h.bytes()), "a late answer") {
		t.Fatal("the late answer was persisted")
	}
}

// gatedLog holds the first commit that matches until released, with the
// agent's commit lock held, so an Abort issued meanwhile queues behind it.
type gatedLog struct {
	Log
	match   func([]session.Fact) bool
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func newGate(match func([]session.Fact) bool) *gatedLog {
	return &gatedLog{match: match, entered: make(chan struct{}), release: make(chan struct{})}
}

func (g *gatedLog) Commit(ctx context.Context, facts []session.Fact) ([]session.Fact, error) {
	if g.match(facts) {
		g.once.Do(func() {
			close(g.entered)
			<-g.release
		})
	}
	return g.Log.Commit(ctx, facts)
}

// settleFirst runs prompt with a gate on the settlement matched by match,
// issues an Abort while the settlement holds the commit point, then lets
// the settlement through. It returns the run result and what Abort said.
func settleFirst(t *testing.T, replies []providertest.Reply, match func([]session.Fact) bool) (*harness, Result, bool) {
	gate := newGate(match)
	h := newHarness(t, replies, withLog(func(l Log) Log { gate.Log = l; return gate }))
	done := h.runAsync("go")
	<-gate.entered
	aborted := make(chan bool, 1)
	go func() {
		ok, err := h.agent.Abort(context.Background())
		if err != nil {
			t.Error(err)
		}
		aborted <- ok
	}()
	// The settlement holds the commit point; release it only once Abort
	// is queued behind it, so the order is the one this test is about.
	waitFor(t, "Abort to wait for the commit point", func() bool { return h.agent.abortsWaiting.Load() > 0 })
	close(gate.release)
	res := wait(t, done)
	return h, res, <-aborted
}

func isFinalAnswer(facts []session.Fact) bool {
	for _, f := range facts {
		if e, ok := f.Entry.(*session.AssistantEntry); ok && e.StopReason == session.StopReasonStop {
			return true
		}
	}
	return false
}

func isToolResult(facts []session.Fact) bool {
	for _, f := range facts {
		if _, ok := f.Entry.(*session.ToolResultEntry); ok {
			return true
		}
	}
	return false
}

// Settlement first: the final answer committed, so the abort finds nothing
// to abort and changes nothing.
func TestAbortRaceModelSettlementFirst(t *testing.T) {
	h, res, aborted := settleFirst(t, []providertest.Reply{text("the answer")}, isFinalAnswer)
	if res.Outcome != session.OutcomeCompleted || res.Answer != "the answer" || aborted {
		t.Fatalf("result = %+v, abort accepted = %v", res, aborted)
	}
	if strings.Contains(h.labels(), "abortRequested") {
		t.Fatalf("facts: %s", h.labels())
	}
}

func TestAbortRaceToolAbortFirst(t *testing.T) {
	var h *harness
	hk := &hooks{BeforeSettle: func() {
		op := h.agent.cfg.Log.State().Operation
		if op != nil && len(op.ToolCalls) == 1 && op.ToolCalls[0].Status == session.ToolPending && !op.AbortRequested {
			if ok, err := h.agent.Abort(context.Background()); !ok || err != nil {
				t.Errorf("Abort = %v, %v", ok, err)
			}
		}
	}}
	h = newHarness(t, []providertest.Reply{calls(call("c1", "bash", `{"command":"echo once >> marker"}`))}, withHooks(hk))
	res := h.run("go")
	if res.Outcome != session.OutcomeAborted {
		t.Fatalf("result = %+v", res)
	}
	want := "user runStarted stepAttempt:assistant assistant:toolUse usage toolStarted abortRequested:tool synthetic:interrupted operationFinished:aborted"
	if got := h.labels(); got != want {
		t.Fatalf("facts:\n got %s\nwant %s", got, want)
	}
	if strings.Contains(string(h.bytes()), `"type":"success"`) {
		t.Fatal("the late tool result was persisted")
	}
}

// Settlement first in the tool phase: the result stands; the abort then
// ends the run before the next model step.
func TestAbortRaceToolSettlementFirst(t *testing.T) {
	h, res, aborted := settleFirst(t, []providertest.Reply{
		calls(call("c1", "bash", `{"command":"echo once >> marker"}`)),
		text("never requested"),
	}, isToolResult)
	if res.Outcome != session.OutcomeAborted || !aborted {
		t.Fatalf("result = %+v, abort accepted = %v", res, aborted)
	}
	want := "user runStarted stepAttempt:assistant assistant:toolUse usage toolStarted tool:success abortRequested:model operationFinished:aborted"
	if got := h.labels(); got != want {
		t.Fatalf("facts:\n got %s\nwant %s", got, want)
	}
	if n := len(h.server.Requests()); n != 1 {
		t.Fatalf("%d model requests after the abort", n-1)
	}
}

// An Esc during a running command: the model's result is the contract's
// fixed text, and the projection carries what the command printed and how
// long it ran, for the user.
func TestAbortedCommandReportsItsPartialOutput(t *testing.T) {
	var outcome ToolOutcome
	var mu sync.Mutex
	h := newHarness(t, []providertest.Reply{
		calls(call("c1", "bash", `{"command":"echo first; echo second; echo $$ > child.pid; exec sleep 30"}`)),
	}, func(c *Config) {
		next := c.Events
		c.Events = func(ev Event) {
			if tc, ok := ev.(ToolCompleted); ok {
				mu.Lock()
				outcome = tc.Outcome
				mu.Unlock()
			}
			next(ev)
		}
	})
	done := h.runAsync("deploy")
	readPID(t, h.path("child.pid"))
	if ok, err := h.agent.Abort(context.Background()); !ok || err != nil {
		t.Fatalf("Abort = %v, %v", ok, err)
	}
	if res := wait(t, done); res.Outcome != session.OutcomeAborted {
		t.Fatalf("result = %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if outcome.Outcome != "cancelled" || outcome.Content != session.ContentInterrupted {
		t.Fatalf("outcome %+v", outcome)
	}
	if !strings.Contains(outcome.Partial, "first\nsecond") || outcome.Duration <= 0 {
		t.Fatalf("partial %q after %v", outcome.Partial, outcome.Duration)
	}
}
