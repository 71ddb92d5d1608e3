package agent

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// approver is a scripted Approve hook that records what it was asked and
// what the session file held at that moment.
type approver struct {
	t       *testing.T
	h       **harness
	mu      sync.Mutex
	asked   []ApprovalRequest
	decide  func(ctx context.Context, req ApprovalRequest) (Approval, error)
	waiting chan struct{} // receives once per request, before decide
}

func newApprover(t *testing.T, h **harness, decide func(ctx context.Context, req ApprovalRequest) (Approval, error)) *approver {
	return &approver{t: t, h: h, decide: decide, waiting: make(chan struct{}, 8)}
}

func (a *approver) approve(ctx context.Context, req ApprovalRequest) (Approval, error) {
	// Nothing about the call may be durable before the answer.
	for _, f := range (*a.h).facts() {
		if f.label() == "toolStarted" && f.Record["toolCallId"] == req.ToolCallID {
			a.t.Errorf("toolStarted of %s was committed before the user answered", req.ToolCallID)
		}
	}
	a.mu.Lock()
	a.asked = append(a.asked, req)
	a.mu.Unlock()
	a.waiting <- struct{}{}
	return a.decide(ctx, req)
}

func (a *approver) tools() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var names []string
	for _, r := range a.asked {
		names = append(names, r.Tool)
	}
	return strings.Join(names, " ")
}

func withApprove(f ApproveFunc) harnessOption { return func(c *Config) { c.Approve = f } }

func allow(context.Context, ApprovalRequest) (Approval, error) { return Approval{Allow: true}, nil }

// blockUntilDone waits for the answer that never comes: only an abort or a
// hard stop ends it.
func blockUntilDone(ctx context.Context, _ ApprovalRequest) (Approval, error) {
	<-ctx.Done()
	return Approval{}, ctx.Err()
}

func TestApprovalAllowRunsTheCallAndReadNeverAsks(t *testing.T) {
	var h *harness
	ap := newApprover(t, &h, allow)
	h = newHarness(t, []providertest.Reply{
		calls(call("c1", "read", `{"path":"missing.txt"}`), call("c2", "bash", `{"command":"echo ran > marker"}`)),
		text("done"),
	}, withApprove(ap.approve))
	res := h.run("go")
	if res.Outcome != session.OutcomeCompleted {
		t.Fatalf("result = %+v", res)
	}
	if got := ap.tools(); got != "bash" {
		t.Fatalf("asked about %q, want only bash", got)
	}
	if req := ap.asked[0]; req.ToolCallID != "c2" || !req.Builtin || string(req.Arguments) != `{"command":"echo ran > marker"}` {
		t.Fatalf("request = %+v", req)
	}
	if _, err := os.Stat(h.path("marker")); err != nil {
		t.Fatalf("the allowed command did not run: %v", err)
	}
	want := "user runStarted stepAttempt:assistant assistant:toolUse usage toolStarted tool:error toolStarted tool:success stepAttempt:assistant assistant:stop usage operationFinished:completed"
	if got := h.labels(); got != want {
		t.Fatalf("facts:\n got %s\nwant %s", got, want)
	}
}

func TestApprovalDenialIsAnErrorResultAndNothingRuns(t *testing.T) {
	var h *harness
	ap := newApprover(t, &h, func(context.Context, ApprovalRequest) (Approval, error) {
		return Approval{Reason: "  not on my machine "}, nil
	})
	h = newHarness(t, []providertest.Reply{
		calls(call("c1", "bash", `{"command":"echo ran > marker"}`), call("c2", "write", `{"path":"w.txt","content":"x"}`)),
		text("understood"),
	}, withApprove(ap.approve))
	res := h.run("go")
	if res.Outcome != session.OutcomeCompleted || res.Answer != "understood" {
		t.Fatalf("result = %+v", res)
	}
	if got := ap.tools(); got != "bash write" {
		t.Fatalf("asked about %q", got)
	}
	for _, name := range []string{"marker", "w.txt"} {
		if _, err := os.Stat(h.path(name)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s exists after a denial (err %v)", name, err)
		}
	}
	want := "user runStarted stepAttempt:assistant assistant:toolUse usage toolStarted tool:error toolStarted tool:error stepAttempt:assistant assistant:stop usage operationFinished:completed"
	if got := h.labels(); got != want {
		t.Fatalf("facts:\n got %s\nwant %s", got, want)
	}
	h.reduce() // the file is valid under session.md
	// The model is told, with the reason.
	reqs := h.server.Requests()
	msgs := reqs[len(reqs)-1].Chat.Messages
	wantContent := "Error: The user denied this tool call; it was not executed.\nReason given by the user: not on my machine"
	var tools int
	for _, m := range msgs {
		if m.Role == "tool" {
			tools++
			if m.Content == nil || *m.Content != wantContent {
				t.Fatalf("tool message = %v, want %q", m.Content, wantContent)
			}
		}
	}
	if tools != 2 {
		t.Fatalf("%d tool messages sent, want 2", tools)
	}
	h.obs.mu.Lock()
	events := strings.Join(h.obs.events, " ")
	h.obs.mu.Unlock()
	if !strings.Contains(events, "tool.started:bash tool.completed:bash:failed") {
		t.Fatalf("events = %s", events)
	}
}

func TestApprovalEscWhileWaitingAbortsTheCallUnstarted(t *testing.T) {
	var h *harness
	ap := newApprover(t, &h, blockUntilDone)
	h = newHarness(t, []providertest.Reply{
		calls(call("c1", "bash", `{"command":"echo ran > marker"}`), call("c2", "bash", `{"command":"echo two > marker2"}`)),
	}, withApprove(ap.approve))
	done := h.runAsync("go")
	<-ap.waiting
	if ok, err := h.agent.Abort(context.Background()); !ok || err != nil {
		t.Fatalf("Abort = %v, %v", ok, err)
	}
	res := wait(t, done)
	if res.Outcome != session.OutcomeAborted {
		t.Fatalf("result = %+v", res)
	}
	want := "user runStarted stepAttempt:assistant assistant:toolUse usage abortRequested:tool synthetic:aborted synthetic:aborted operationFinished:aborted"
	if got := h.labels(); got != want {
		t.Fatalf("facts:\n got %s\nwant %s", got, want)
	}
	facts := h.facts()
	if call := facts[5].Record["toolCallId"]; call != "c1" {
		t.Fatalf("the abort names call %v, want the one waiting (c1)", call)
	}
	if _, err := os.Stat(h.path("marker")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the unapproved command ran")
	}
	h.reduce()
}

func TestApprovalCrashWhileWaitingAsksAgainOnResume(t *testing.T) {
	var h *harness
	ap := newApprover(t, &h, blockUntilDone)
	h = newHarness(t, []providertest.Reply{
		calls(call("c1", "bash", `{"command":"echo ran > marker"}`)),
		text("done"),
	}, withApprove(ap.approve))
	ctx, stop := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := h.agent.Run(ctx, "go")
		errc <- err
	}()
	<-ap.waiting
	stop() // the process dies while the user thinks
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run = %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after the hard stop")
	}
	before := "user runStarted stepAttempt:assistant assistant:toolUse usage"
	if got := h.labels(); got != before {
		t.Fatalf("facts after the crash:\n got %s\nwant %s", got, before)
	}
	if _, err := os.Stat(h.path("marker")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the unapproved command ran")
	}

	// An approver that fails (the terminal went away) leaves it unasked too.
	h.reopen(withApprove(func(context.Context, ApprovalRequest) (Approval, error) {
		return Approval{}, errors.New("no terminal")
	}))
	if _, err := h.agent.Resume(context.Background()); err == nil || !strings.Contains(err.Error(), "no terminal") {
		t.Fatalf("Resume with a failing approver = %v", err)
	}
	if got := h.labels(); got != before {
		t.Fatalf("facts after a failed approval:\n got %s\nwant %s", got, before)
	}

	again := newApprover(t, &h, allow)
	h.reopen(withApprove(again.approve))
	res, err := h.agent.Resume(context.Background())
	if err != nil || res.Outcome != session.OutcomeCompleted {
		t.Fatalf("Resume = %+v, %v", res, err)
	}
	if len(again.asked) != 1 || !again.asked[0].Recovery || again.asked[0].ToolCallID != "c1" {
		t.Fatalf("resume asked %+v", again.asked)
	}
	if _, err := os.Stat(h.path("marker")); err != nil {
		t.Fatalf("the approved command did not run: %v", err)
	}
}
