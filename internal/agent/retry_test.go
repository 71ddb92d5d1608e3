package agent

import (
	"context"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
)

func withRetries() harnessOption {
	return func(c *Config) { c.Provider = provider.Retry(c.Provider, provider.RetryConfig{}) }
}

// A request the server did not answer is sent again inside the same
// attempt: one stepAttempt, the wait reported, the answer settled.
func TestRetriedRequestIsOneAttempt(t *testing.T) {
	h := newHarness(t, []providertest.Reply{{Status: 503, RetryAfter: "1"}, text("answer")}, withRetries())
	var waits []provider.RetryWait
	h.agent.sink = func(ev Event) {
		if r, ok := ev.(ModelRetrying); ok {
			waits = append(waits, r.Wait)
		}
	}
	res := h.run("hi")
	if res.Answer != "answer" || h.labels() != "user runStarted stepAttempt:assistant assistant:stop usage operationFinished:completed" {
		t.Fatalf("result %+v, facts %s", res, h.labels())
	}
	if len(waits) != 1 || waits[0].String() != "retrying in 1s: HTTP 503" {
		t.Fatalf("waits %+v", waits)
	}
}

// Esc during a retry wait ends it at once and aborts the run.
func TestEscEndsARetryWait(t *testing.T) {
	h := newHarness(t, []providertest.Reply{{Status: 429, RetryAfter: "60"}, text("too late")}, withRetries())
	h.agent.sink = func(ev Event) {
		if _, ok := ev.(ModelRetrying); ok {
			go func() {
				if ok, err := h.agent.Abort(context.Background()); !ok || err != nil {
					t.Errorf("Abort = %v, %v", ok, err)
				}
			}()
		}
	}
	began := time.Now()
	res := h.run("hi")
	if res.Outcome != session.OutcomeAborted || time.Since(began) > 20*time.Second {
		t.Fatalf("result %+v after %v", res, time.Since(began))
	}
	if h.labels() != "user runStarted stepAttempt:assistant abortRequested:model stepFailed:aborted operationFinished:aborted" {
		t.Fatalf("facts %s", h.labels())
	}
	if n := len(h.server.Requests()); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
}
