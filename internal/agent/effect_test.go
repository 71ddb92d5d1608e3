package agent

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/session"
)

// BeforeEffect sees the durable toolStarted of the call it precedes, runs
// before the effect, and its after func runs once the effect ended.
func TestBeforeEffectBetweenIntentAndEffect(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	var h *harness
	hook := func(ctx context.Context, id, name string, args jsontext.Value) func() {
		mu.Lock()
		defer mu.Unlock()
		durable := false
		if op := h.store.State().Operation; op != nil {
			for _, tc := range op.ToolCalls {
				durable = durable || tc.ToolStartedID == id
			}
		}
		_, err := os.Stat(h.path("made"))
		seen = append(seen, name+" before", boolWord(durable, "durable"), boolWord(err == nil, "effect ran"))
		return func() {
			_, err := os.Stat(h.path("made"))
			mu.Lock()
			seen = append(seen, name+" after", boolWord(err == nil, "effect ran"))
			mu.Unlock()
		}
	}
	h = newHarness(t, []providertest.Reply{
		calls(call("c1", "bash", `{"command":"touch made"}`)),
		text("done"),
	}, func(c *Config) { c.BeforeEffect = hook })
	if res := h.run("go"); res.Outcome != session.OutcomeCompleted {
		t.Fatalf("outcome %s", res.Outcome)
	}
	want := []string{"bash before", "durable", "not effect ran", "bash after", "effect ran"}
	if len(seen) != len(want) {
		t.Fatalf("seen %q", seen)
	}
	for i := range want {
		if seen[i] != want[i] {
			t.Fatalf("seen %q, want %q", seen, want)
		}
	}
}

func boolWord(b bool, word string) string {
	if b {
		return word
	}
	return "not " + word
}

// ResultNote's text is appended to the tool's result after the effect
// (and BeforeEffect's after func) ran, is committed with it, and reaches
// the model; a failed call is told so.
func TestResultNoteIsCommittedWithTheResult(t *testing.T) {
	var order []string
	var failed []bool
	h := newHarness(t, []providertest.Reply{
		calls(call("c1", "bash", `{"command":"echo hi"}`)),
		calls(call("c2", "bash", `{"command":"exit 3"}`)),
		text("done"),
	}, func(c *Config) {
		c.BeforeEffect = func(context.Context, string, string, jsontext.Value) func() {
			return func() { order = append(order, "after effect") }
		}
		c.ResultNote = func(_ context.Context, id, name string, _ jsontext.Value, f bool) string {
			order = append(order, "note "+name)
			failed = append(failed, f)
			return "\n\nNOTE for " + name
		}
	})
	if res := h.run("go"); res.Outcome != session.OutcomeCompleted {
		t.Fatalf("outcome %s", res.Outcome)
	}
	if got := strings.Join(order, ", "); got != "after effect, note bash, after effect, note bash" {
		t.Fatalf("order: %s", got)
	}
	if len(failed) != 2 || failed[0] || !failed[1] {
		t.Fatalf("failed = %v", failed)
	}
	committed := string(h.bytes())
	if strings.Count(committed, `NOTE for bash`) != 2 {
		t.Fatalf("the notes are not in the session:\n%s", committed)
	}
	msgs := h.server.Requests()[1].Chat.Messages
	if last := msgs[len(msgs)-1]; last.Content == nil || !strings.HasSuffix(*last.Content, "\n\nNOTE for bash") {
		t.Fatalf("the model got %+v", last)
	}
}
