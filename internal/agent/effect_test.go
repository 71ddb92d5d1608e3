package agent

import (
	"context"
	"os"
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
