package rewindcmd

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/session/sessiontest"
)

// Planning a rewind lists the session's user turns in one streamed pass:
// at once it holds the turns, the tool calls and the longest line (a
// compaction's, which lists the history), not the file (4.7 MB here).
func TestRewindPlanStreamsTheSession(t *testing.T) {
	data := sessiontest.Generate(sessiontest.Options{Facts: 400 * 15, Seed: 7, CompactEvery: 20})
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	st, c := session.Reduce(data)
	if c != nil {
		t.Fatal(c)
	}
	var prompts []string
	for _, m := range st.Transcript {
		if m.Role == session.RoleUser {
			prompts = append(prompts, *m.Content)
		}
	}
	size := uint64(len(data))
	data = nil
	var (
		j   *Journal
		err error
	)
	peak := sessiontest.PeakHeap(func() {
		j, err = Plan(context.Background(), Request{Path: path, Turn: len(prompts), Conversation: true}, 0)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("rewind plan of a %d-byte session: peak heap %d bytes", size, peak)
	if peak > size*3/4 {
		t.Errorf("planning a rewind of a %d-byte session held %d bytes at once", size, peak)
	}
	if j.Turn.N != len(prompts) || j.Turn.Prompt != prompts[len(prompts)-1] {
		t.Fatalf("turn %d %q, want %d %q", j.Turn.N, j.Turn.Prompt, len(prompts), prompts[len(prompts)-1])
	}
	scan, err := ScanTurnsFile(path, false)
	if err != nil || len(scan.Turns) != len(prompts) {
		t.Fatalf("%d turns (%v), want %d", len(scan.Turns), err, len(prompts))
	}
	for i, u := range scan.Turns {
		if u.Prompt != prompts[i] || u.N != i+1 {
			t.Fatalf("turn %d: %+v, want %q", i+1, u, prompts[i])
		}
	}
}
