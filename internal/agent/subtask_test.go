package agent

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// subtask is a concurrent, continuable tool: each run records its
// toolStarted id and waits for release (or its context).
type subtask struct {
	mu      sync.Mutex
	started []string
	running atomic.Int32
	most    atomic.Int32
	release chan struct{}
	entered chan string
	cont    bool
}

func newSubtask() *subtask {
	return &subtask{release: make(chan struct{}), entered: make(chan string, 16), cont: true}
}

func (s *subtask) Definition() tools.Definition {
	return tools.Definition{Name: "sub", Description: "a subtask", Parameters: jsontext.Value(`{"type":"object","properties":{}}`)}
}
func (s *subtask) Replay() tools.Replay {
	return tools.Replay{Policy: tools.ReplayNever, Key: "test:sub"}
}
func (s *subtask) RunsConcurrently() bool    { return true }
func (s *subtask) ContinuesAfterCrash() bool { return s.cont }
func (s *subtask) Run(ctx context.Context, _ jsontext.Value) tools.Result {
	n := s.running.Add(1)
	defer s.running.Add(-1)
	for {
		m := s.most.Load()
		if n <= m || s.most.CompareAndSwap(m, n) {
			break
		}
	}
	id := tools.StartedID(ctx)
	s.mu.Lock()
	s.started = append(s.started, id)
	s.mu.Unlock()
	s.entered <- id
	select {
	case <-s.release:
		return tools.Result{Content: "done " + id[:8], Usage: &session.Usage{Input: 10, Output: 1}}
	case <-ctx.Done():
		return tools.Result{Content: "stopped", IsError: true}
	}
}

func subCalls(n int) providertest.Reply {
	var calls []providertest.ToolCall
	for i := range n {
		calls = append(calls, providertest.ToolCall{ID: string(rune('a' + i)), Name: "sub", Arguments: `{}`})
	}
	return providertest.Reply{ToolCalls: calls}
}

func withTool(t tools.Tool) harnessOption {
	return func(c *Config) { c.Tools = append(c.Tools, t) }
}

// Three concurrent calls with MaxParallel 2 run two at a time, and their
// results and usage come back in the order of the calls.
func TestConcurrentCallsRunInBatches(t *testing.T) {
	sub := newSubtask()
	var mu sync.Mutex
	var opUsage session.Usage
	h := newHarness(t, []providertest.Reply{subCalls(3), {Text: "ok"}}, withTool(sub), func(c *Config) {
		c.MaxParallel = 2
		prev := c.Events
		c.Events = func(ev Event) {
			prev(ev)
			if oc, ok := ev.(OperationCompleted); ok {
				mu.Lock()
				opUsage = oc.Outcome.Usage
				mu.Unlock()
			}
		}
	})
	go func() {
		<-sub.entered
		<-sub.entered // the first two run together: both are waiting now
		close(sub.release)
	}()
	if res := h.run("go"); res.Outcome != session.OutcomeCompleted {
		t.Fatalf("%+v", res)
	}
	st := h.reduce()
	// The operation's usage counts the calls' tokens, as the session does.
	mu.Lock()
	defer mu.Unlock()
	if opUsage.Input < 30 || opUsage.Output < 3 {
		t.Errorf("the operation's usage %+v lacks the calls' tokens", opUsage)
	}
	if got := sub.most.Load(); got != 2 {
		t.Errorf("at most %d ran at once, want 2", got)
	}
	// Two intents, then their two results, then the third call.
	b := string(h.bytes())
	first := strings.Index(b, `"role":"tool"`)
	if n := strings.Count(b[:first], `"type":"toolStarted"`); n != 2 {
		t.Errorf("%d calls started before the first result, want 2", n)
	}
	var ids []string
	for _, m := range st.Transcript {
		if m.Role == session.RoleTool {
			ids = append(ids, m.ToolCallID)
		}
	}
	if len(ids) != 3 || ids[0] != "a" || ids[1] != "b" || ids[2] != "c" {
		t.Fatalf("results %v", ids)
	}
	if st.Usage.Input < 30 {
		t.Fatalf("tool usage not recorded: %+v", st.Usage)
	}
}

// An abort while concurrent calls run stops them all; each is answered
// interrupted and the operation ends aborted.
func TestAbortStopsConcurrentCalls(t *testing.T) {
	sub := newSubtask()
	h := newHarness(t, []providertest.Reply{subCalls(3)}, withTool(sub))
	done := make(chan Result)
	go func() { done <- h.run("go") }()
	for range 3 {
		<-sub.entered
	}
	if ok, err := h.agent.Abort(context.Background()); !ok || err != nil {
		t.Fatalf("abort: %v %v", ok, err)
	}
	res := <-done
	if res.Outcome != session.OutcomeAborted {
		t.Fatalf("%+v", res)
	}
	for _, m := range h.reduce().Transcript {
		if m.Role == session.RoleTool && *m.Content != session.ContentInterrupted {
			t.Fatalf("a result %q", *m.Content)
		}
	}
}

// A continuable call a process left without a result is continued by the
// next process under its toolStarted id; a call that is not continuable
// is answered interrupted, as the contract says.
func TestContinuableCallContinuesAfterCrash(t *testing.T) {
	for _, continues := range []bool{true, false} {
		sub := newSubtask()
		sub.cont = continues
		h := newHarness(t, []providertest.Reply{subCalls(1), {Text: "after"}}, withTool(sub))
		ctx, hardStop := context.WithCancel(context.Background())
		go func() { <-sub.entered; hardStop() }()
		if _, err := h.agent.Run(ctx, "go"); err == nil {
			t.Fatal("a hard stop ended the run")
		}
		sub.mu.Lock()
		first := sub.started[0]
		sub.mu.Unlock()
		close(sub.release)
		h.reopen()
		rctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		res, err := h.agent.Resume(rctx)
		cancel()
		if err != nil || res.Outcome != session.OutcomeCompleted {
			t.Fatalf("resume: %+v %v", res, err)
		}
		sub.mu.Lock()
		defer sub.mu.Unlock()
		var result string
		for _, m := range h.reduce().Transcript {
			if m.Role == session.RoleTool {
				result = *m.Content
			}
		}
		switch {
		case continues && (len(sub.started) != 2 || sub.started[1] != first || result != "done "+first[:8]):
			t.Fatalf("continued: started %v, result %q", sub.started, result)
		case !continues && (len(sub.started) != 1 || result != session.ContentInterrupted):
			t.Fatalf("not continuable: started %v, result %q", sub.started, result)
		}
	}
}
