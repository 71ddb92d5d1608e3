package session_test

import (
	"testing"

	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/session/sessiontest"
)

// TestGeneratedSessionReduces checks the generator's output against the
// reducer: a long session with compactions reduces to an idle state whose
// transcript holds every message.
func TestGeneratedSessionReduces(t *testing.T) {
	data := sessiontest.Generate(sessiontest.Options{Facts: 3000, Seed: 1, CompactEvery: 5})
	st, c := session.Reduce(data)
	if c != nil {
		t.Fatalf("generated session is corrupt: %v", c)
	}
	if !st.Idle() || st.Facts < 3000 || st.RepairedLength != int64(len(data)) {
		t.Fatalf("idle=%v facts=%d repaired=%d len=%d", st.Idle(), st.Facts, st.RepairedLength, len(data))
	}
	if len(st.ActiveContext) >= len(st.Transcript) || st.ActiveContext[0].Role != session.RoleUser {
		t.Fatalf("compaction did not shorten the active context: %d of %d", len(st.ActiveContext), len(st.Transcript))
	}
}
