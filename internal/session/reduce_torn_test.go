package session_test

import (
	"bytes"
	"testing"

	s "github.com/tiny-agent/tiny-go/internal/session"
	st "github.com/tiny-agent/tiny-go/internal/session/sessiontest"
)

// TestTornTailAtEveryOffset cuts a realistic session at every byte of its
// last transaction (a reply, its usage and the terminal in one line): the
// cut file reduces exactly like the file without that line, with
// repairedLength at the previous line's end.
func TestTornTailAtEveryOffset(t *testing.T) {
	b := st.GenerateBuilder(st.Options{Facts: 80, Seed: 11, CompactEvery: 2})
	r := startRunOn(b, "one last question")
	final := st.Reply(r.step, r.attempt, s.StopReasonStop, "A final answer with \"quotes\", \\ and ünïcödé.")
	final.ID = b.ID()
	b.Commit(final, st.Usage(r.op, r.attempt, "", s.Usage{Input: 3, Output: 4}),
		st.Finished(r.op, s.OperationRun, s.OutcomeCompleted, s.CompletionNormal, final.ID, nil))
	data := b.Bytes()

	start := bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
	if data[start] != '[' {
		t.Fatalf("the last line is not a multi-fact transaction: %.40s", data[start:])
	}
	prev, c := s.Reduce(data[:start])
	if c != nil {
		t.Fatal(c)
	}
	if prev.RepairedLength != int64(start) || prev.Idle() {
		t.Fatalf("previous state: repairedLength %d (want %d), idle %v", prev.RepairedLength, start, prev.Idle())
	}
	want, _ := s.MarshalState(prev)
	for cut := start; cut < len(data); cut++ {
		got, c := s.Reduce(data[:cut])
		if c != nil {
			t.Fatalf("cut at %d: %v", cut, c)
		}
		if b, _ := s.MarshalState(got); !bytes.Equal(b, want) {
			t.Fatalf("cut at %d (%d bytes into the line) reduces differently", cut, cut-start)
		}
	}
	full, c := s.Reduce(data)
	if c != nil || !full.Idle() || full.RepairedLength != int64(len(data)) {
		t.Fatalf("full file: %v, idle %v", c, full != nil && full.Idle())
	}
}
