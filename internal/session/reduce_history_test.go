package session_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	s "github.com/tiny-agent/tiny-go/internal/session"
	st "github.com/tiny-agent/tiny-go/internal/session/sessiontest"
)

// A session with several compactions, each over the whole history,
// reduces; its transcript keeps every message and its ids.
func TestRepeatedCompactionsOverTheWholeHistory(t *testing.T) {
	b := st.GenerateBuilder(st.Options{Facts: 400, Seed: 5, CompactEvery: 2})
	state, c := s.Reduce(b.Bytes())
	if c != nil {
		t.Fatal(c)
	}
	if n := strings.Count(string(b.Bytes()), `"type":"compactionStarted"`); n < 3 {
		t.Fatalf("%d compactions, want several", n)
	}
	if len(state.TranscriptEntryIDs) != len(state.Transcript) || state.TranscriptEntryIDs[len(state.TranscriptEntryIDs)-1] != b.Boundary() {
		t.Fatalf("%d transcript ids for %d messages", len(state.TranscriptEntryIDs), len(state.Transcript))
	}
}

// A second compaction written the way the previous release wrote it (the
// active context's entries, or its digest) is a corruption at its line,
// and the one line says which rule it broke.
func TestActiveContextCompactionIsCorrupt(t *testing.T) {
	for _, tc := range []struct {
		name         string
		activeDigest bool // whole-history lists, active-context digest
		words        string
	}{
		{"active-context lists and digest", false, "compactedEntryIds + retainedEntryIds are not every message entry"},
		{"whole lists, active-context digest", true, "sourceDigest is not the digest of every message entry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := st.GenerateBuilder(st.Options{Facts: 120, Seed: 3, CompactEvery: 2})
			if !strings.Contains(string(b.Bytes()), `"type":"compactionStarted"`) {
				t.Fatal("no first compaction")
			}
			whole, ok := b.PlanCompaction(4)
			if !ok {
				t.Fatal("nothing to compact")
			}
			active := b.Sources()
			if tc.activeDigest {
				ids := func(ms []s.RetainedMessage) []string {
					var out []string
					for _, m := range ms {
						out = append(out, m.SourceEntryID)
					}
					return out
				}
				b.Commit(st.Record(&s.CompactionStarted{
					OperationID: b.ID(), InputThroughEntryID: b.Boundary(), ResultEntryID: b.ID(),
					CompactedEntryIDs: ids(whole.Compacted), RetainedEntryIDs: ids(whole.Retained),
					SourceDigest: s.SourceDigest(active),
				}))
			} else {
				old := st.CompactionPlan{Compacted: active[:len(active)-len(whole.Retained)], Retained: whole.Retained}
				if len(old.Compacted) >= len(whole.Compacted) {
					t.Fatal("the active context is the whole history")
				}
				b.StartCompaction(old)
			}
			_, c := s.Reduce(b.Bytes())
			if c == nil || c.Code != s.CorruptInvalidReference || c.Line != b.Lines() || c.Seq != int64(b.Facts()) {
				t.Fatalf("Reduce = %v, want INVALID_REFERENCE at line %d seq %d", c, b.Lines(), b.Facts())
			}
			line := c.Describe()
			if strings.Contains(line, "\n") || !strings.Contains(line, tc.words) || !strings.Contains(line, "runtime.md §4") {
				t.Fatalf("the corruption does not name the rule in one line: %q", line)
			}
			t.Log(line)
		})
	}
}

// The history digest runs on between compactions: a compaction that is
// only checked (or rejected) leaves it as it was, so the same compaction
// applied afterwards, and the next one, still verify.
func TestCheckedCompactionLeavesTheHistoryDigest(t *testing.T) {
	b := st.GenerateBuilder(st.Options{Facts: 120, Seed: 3, CompactEvery: 2})
	before := len(b.Bytes())
	plan, ok := b.PlanCompaction(4)
	if !ok {
		t.Fatal("nothing to compact")
	}
	b.StartCompaction(plan)
	data := b.Bytes()
	line := data[before : len(data)-1]
	r, c := s.NewReducerFromFile(data[:before])
	if c != nil {
		t.Fatal(c)
	}
	tx, c := s.DecodeTransaction(line)
	if c != nil {
		t.Fatal(c)
	}
	bad := *tx[0].Record.(*s.CompactionStarted)
	bad.SourceDigest = "sha256:" + strings.Repeat("0", 64)
	for range 3 {
		if c := r.Check(tx); c != nil {
			t.Fatalf("Check: %v", c)
		}
		if c := r.Check([]s.Fact{{Seq: tx[0].Seq, ID: tx[0].ID, Timestamp: tx[0].Timestamp, Record: &bad}}); c == nil {
			t.Fatal("a wrong digest passed Check")
		}
	}
	if c := r.ApplyLine(line, b.Lines()); c != nil {
		t.Fatalf("apply after checks: %v", c)
	}
}

// A checked transaction that appends a message and then compacts advances
// the running history hash past a message that is undone; the undo must
// restore the hash, or the next compaction's digest would be wrong.
func TestUndoneCompactionRestoresTheHistoryHash(t *testing.T) {
	b := st.GenerateBuilder(st.Options{Facts: 120, Seed: 3, CompactEvery: 2})
	before := len(b.Bytes())
	plan, ok := b.PlanCompaction(4)
	if !ok {
		t.Fatal("nothing to compact")
	}
	b.StartCompaction(plan)
	data := b.Bytes()
	r, c := s.NewReducerFromFile(data[:before])
	if c != nil {
		t.Fatal(c)
	}
	state := r.State()
	user := s.Fact{Seq: state.Facts + 1, ID: "018f0000-0000-7000-8000-00000000ffff", Timestamp: 1, Entry: &s.UserEntry{Content: "one more"}}
	hist := []s.RetainedMessage{}
	for i, m := range state.Transcript {
		hist = append(hist, s.RetainedMessage{SourceEntryID: state.TranscriptEntryIDs[i], Message: m})
	}
	content := "one more"
	hist = append(hist, s.RetainedMessage{SourceEntryID: user.ID, Message: s.Message{Role: s.RoleUser, Content: &content}})
	var ids []string
	for _, h := range hist {
		ids = append(ids, h.SourceEntryID)
	}
	cs := s.Fact{Seq: state.Facts + 2, ID: "018f0000-0000-7000-8000-00000000fffe", Timestamp: 2, Record: &s.CompactionStarted{
		OperationID: "018f0000-0000-7000-8000-00000000fffd", InputThroughEntryID: user.ID, ResultEntryID: "018f0000-0000-7000-8000-00000000fffc",
		CompactedEntryIDs: ids[:len(ids)-1], RetainedEntryIDs: ids[len(ids)-1:], SourceDigest: s.SourceDigest(hist),
	}}
	if c := r.Check([]s.Fact{user, cs}); c != nil {
		t.Fatalf("Check: %v", c)
	}
	if c := r.ApplyLine(data[before:len(data)-1], b.Lines()); c != nil {
		t.Fatalf("the compaction after an undone one: %v", c)
	}
}

// Under ReleaseCompacted a compaction that retains a message an earlier
// compaction summarized cannot compare its retained tail (the text is
// gone): the read ends in ErrReleasedTextNeeded, never in a verdict of its
// own, and the same file reduces in full.
func TestLeanReadOfARetainedReleasedMessage(t *testing.T) {
	b := st.GenerateBuilder(st.Options{Facts: 120, Seed: 3, CompactEvery: 2})
	lean := func() (*s.Reducer, *s.Corruption, error) {
		r, _, c, err := s.ReadSession(bytes.NewReader(b.Bytes()), 0, s.ReadHooks{ReleaseCompacted: true})
		return r, c, err
	}
	r, c, err := lean()
	if err != nil || c != nil || r.State().Released < 4 {
		t.Fatalf("lean read: %v %v, want a released prefix", c, err)
	}
	released := r.State().Released
	whole, ok := b.PlanCompaction(2)
	if !ok {
		t.Fatal("nothing to compact")
	}
	all := append(whole.Compacted, whole.Retained...)
	k := released - 1
	for k > 0 && all[k].Message.Role != s.RoleUser {
		k--
	}
	if k == 0 {
		t.Fatal("no user message among the released ones")
	}
	plan := st.CompactionPlan{Compacted: all[:k:k], Retained: all[k:]}
	op, result := b.StartCompaction(plan)
	_, att := b.Attempt(op, s.StepCompaction, "")
	b.Commit(st.Usage(op, att, "", s.Usage{}), st.CompactionEntry(op, result, "again", plan))
	b.Commit(st.Finished(op, s.OperationCompaction, s.OutcomeCompleted, "", result, nil))
	full, c := s.Reduce(b.Bytes())
	if c != nil {
		t.Fatalf("full reduce: %v", c)
	}
	if _, c, err := lean(); c != nil || !errors.Is(err, s.ErrReleasedTextNeeded) {
		t.Fatalf("lean read = %v, %v; want ErrReleasedTextNeeded", c, err)
	}
	if full.Released != 0 || len(full.ActiveContext) != 1+len(plan.Retained) {
		t.Fatalf("full state: released %d, %d active messages", full.Released, len(full.ActiveContext))
	}
}
