package acp

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/session/sessiontest"
)

// session/load of a session the store opened with its compacted answers
// released replays the compacted turns' prompts, then the summary as the
// agent's, then every later message as it is; a full state replays its
// transcript.
func TestReplayOfReleasedTurns(t *testing.T) {
	b := sessiontest.GenerateBuilder(sessiontest.Options{Facts: 120, Seed: 3, CompactEvery: 2})
	full, c := session.Reduce(b.Bytes())
	if c != nil {
		t.Fatal(c)
	}
	if got := replayed(full); !reflect.DeepEqual(got, full.Transcript) {
		t.Fatal("a full state does not replay its transcript")
	}
	r, _, c, err := session.ReadSession(bytes.NewReader(b.Bytes()), 0, session.ReadHooks{ReleaseCompacted: true})
	if err != nil || c != nil {
		t.Fatal(c, err)
	}
	st := r.State()
	if st.Released == 0 {
		t.Fatal("nothing released")
	}
	got := replayed(st)
	var users []session.Message
	for _, m := range full.Transcript[:st.Released] {
		if m.Role == session.RoleUser {
			users = append(users, m)
		}
	}
	if len(users) == 0 || !reflect.DeepEqual(got[:len(users)], users) {
		t.Fatalf("the compacted turns' prompts are not replayed first")
	}
	sum := got[len(users)]
	if sum.Role != session.RoleAssistant || sum.Content == nil || !strings.HasPrefix(*sum.Content, session.CompactedHistoryPrefix) {
		t.Fatalf("no summary after the compacted prompts: %+v", sum)
	}
	if !reflect.DeepEqual(got[len(users)+1:], full.Transcript[st.Released:]) {
		t.Fatal("the messages after the compaction are not replayed whole")
	}
}
