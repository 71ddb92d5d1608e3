package store

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/session/sessiontest"
)

// Open keeps what a resume needs of a compacted session: the active
// context whole, every id and user prompt, the running history digest,
// but not the answers and results the compactions summarized. A file
// whose later compaction retains such a message is read again in full.
func TestOpenReleasesCompactedText(t *testing.T) {
	b := sessiontest.GenerateBuilder(sessiontest.Options{Facts: 120, Seed: 3, CompactEvery: 2})
	path := filepath.Join(t.TempDir(), "s.jsonl")
	open := func() (*session.State, *session.State) {
		t.Helper()
		if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		full, c := session.Reduce(b.Bytes())
		if c != nil {
			t.Fatal(c)
		}
		s, err := OpenFile(path, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		return s.State(), full
	}
	got, full := open()
	if got.Released < 4 {
		t.Fatalf("released %d messages", got.Released)
	}
	if !reflect.DeepEqual(got.ActiveContext, full.ActiveContext) || !reflect.DeepEqual(got.TranscriptEntryIDs, full.TranscriptEntryIDs) ||
		got.HistoryDigest() != full.HistoryDigest() {
		t.Fatal("the opened state's active context, ids or history digest differ from a full reduce")
	}
	text := 0
	for i, m := range got.Transcript {
		w := full.Transcript[i]
		switch {
		case m.Role == session.RoleUser || i >= got.Released:
			if !reflect.DeepEqual(m, w) {
				t.Fatalf("message %d differs: %+v, want %+v", i, m, w)
			}
		case m.Content != nil:
			t.Fatalf("message %d (%s) kept its text", i, m.Role)
		case w.Content != nil:
			text++
		}
	}
	if text == 0 {
		t.Fatal("nothing was released")
	}

	// A compaction that retains released messages: compare them in full.
	whole, _ := b.PlanCompaction(2)
	all := append(whole.Compacted, whole.Retained...)
	k := got.Released - 1
	for k > 0 && all[k].Message.Role != session.RoleUser {
		k--
	}
	plan := sessiontest.CompactionPlan{Compacted: all[:k:k], Retained: all[k:]}
	op, result := b.StartCompaction(plan)
	_, att := b.Attempt(op, session.StepCompaction, "")
	b.Commit(sessiontest.Usage(op, att, "", session.Usage{}), sessiontest.CompactionEntry(op, result, "again", plan))
	b.Commit(sessiontest.Finished(op, session.OperationCompaction, session.OutcomeCompleted, "", result, nil))
	got, full = open()
	g, _ := session.MarshalResult(got, nil)
	w, _ := session.MarshalResult(full, nil)
	if got.Released != 0 || !bytes.Equal(g, w) {
		t.Fatalf("a file that needs its released text was not read in full (released %d)", got.Released)
	}
}
