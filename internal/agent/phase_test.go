package agent

import (
	"context"
	"os"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// An Esc that lands right after an effect's intent is durable, before its
// phase is entered (the user sees the start and presses Esc at once), is
// an abort of that phase: the effect never starts, and the abort names the
// phase as it would have mid-effect.
func TestAbortBetweenIntentAndEffect(t *testing.T) {
	cases := []struct {
		name    string
		reply   providertest.Reply
		started func(Event) bool
		want    string
		toolID  string
	}{{
		name:    "model",
		reply:   providertest.Reply{Text: "never asked"},
		started: func(ev Event) bool { _, ok := ev.(ModelStarted); return ok },
		want:    "user runStarted stepAttempt:assistant abortRequested:model stepFailed:aborted operationFinished:aborted",
	}, {
		name:    "tool",
		reply:   calls(call("c1", "bash", `{"command":"touch ran"}`)),
		started: func(ev Event) bool { s, ok := ev.(ToolStarted); return ok && s.Tool.ToolCallID == "c1" },
		want:    "user runStarted stepAttempt:assistant assistant:toolUse usage toolStarted abortRequested:tool synthetic:interrupted operationFinished:aborted",
		toolID:  "c1",
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var h *harness
			var aborted chan struct{}
			sink := func(ev Event) {
				h.obs.record(ev)
				if aborted != nil || !tc.started(ev) {
					return
				}
				// The started event is delivered after the intent's commit
				// and before the phase is entered; the Abort runs on its own
				// goroutine (as a key handler's does) and is durable before
				// the agent goes on.
				aborted = make(chan struct{})
				go func() {
					defer close(aborted)
					if ok, err := h.agent.Abort(context.Background()); !ok || err != nil {
						t.Errorf("Abort = %v, %v", ok, err)
					}
				}()
				waitFor(t, "the abort to be durable", h.durableAbort)
			}
			replies := []providertest.Reply{tc.reply}
			if tc.toolID == "" {
				// The model's request must never be sent: the reply is
				// one a second request would get.
				replies = append(replies, providertest.Reply{Text: "second"})
			}
			h = newHarness(t, replies, func(c *Config) { c.Events = func(ev Event) { sink(ev) } })
			res := h.run("go")
			<-aborted
			if res.Outcome != session.OutcomeAborted {
				t.Fatalf("result = %+v", res)
			}
			if got := h.labels(); got != tc.want {
				t.Fatalf("facts:\n got %s\nwant %s", got, tc.want)
			}
			switch tc.toolID {
			case "":
				if n := len(h.server.Requests()); n != 0 {
					t.Fatalf("%d model requests sent after the abort", n)
				}
			default:
				if _, err := os.Stat(h.path("ran")); err == nil {
					t.Fatal("the tool ran after the abort was durable")
				}
				facts := h.facts()
				if id := facts[len(facts)-3].Record["toolCallId"]; id != tc.toolID {
					t.Fatalf("abort names tool call %v", id)
				}
			}
		})
	}
}
