package session

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

func fixtureFile(t *testing.T, name string) []byte {
	return readTestFile(t, filepath.Join(sessionDir(t), "fixtures", name))
}

// TestReduceFraming covers the line layer: the torn tail, and the codes of
// each kind of broken committed line with its line number.
func TestReduceFraming(t *testing.T) {
	run := fixtureFile(t, "run-accepted.jsonl")
	header := run[:bytes.IndexByte(run, '\n')+1]
	lines := committedLines(run)
	for _, tc := range []struct {
		name string
		data string
		code string
		line int
	}{
		{"empty file", "", CorruptMissingHeader, 1},
		{"torn header", string(header[:50]), CorruptMissingHeader, 1},
		{"blank first line", "\n" + string(header), CorruptBlankLine, 1},
		{"CRLF on line 2", string(header) + string(lines[1]) + "\r\n", CorruptCRLF, 2},
		{"CR only before the torn tail", string(run) + "\r", "", 0},
		{"invalid UTF-8 outside strings on line 2", string(header) + string(lines[1]) + "\xff\n", CorruptInvalidUTF8, 2},
		{"invalid UTF-8 in a string on line 2", string(header) + strings.Replace(string(lines[1]), "inspect", "insp\xffct", 1) + "\n", CorruptMalformedJSON, 2},
		{"invalid UTF-8 in the torn tail", string(run) + "{\"kind\":\"entry\xe2\x82", "", 0},
		{"empty transaction", string(run) + "[]\n", CorruptEmptyTransaction, 3},
		{"header twice", string(run) + string(header), CorruptInvalidFact, 3},
		{"blank line after facts", string(run) + "\n", CorruptBlankLine, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, c := Reduce([]byte(tc.data))
			if tc.code == "" {
				if c != nil {
					t.Fatalf("corrupt: %v", c)
				}
				if st.RepairedLength != int64(len(run)) {
					t.Errorf("repairedLength %d, want %d", st.RepairedLength, len(run))
				}
				return
			}
			if c == nil || c.Code != tc.code || c.Line != tc.line {
				t.Fatalf("Reduce = %v, want %s at line %d", c, tc.code, tc.line)
			}
			if st != nil {
				t.Error("a corrupt session has a state")
			}
		})
	}
}

// printedState is the printed form of the reducer's state.
func printedState(t *testing.T, r *Reducer) string {
	t.Helper()
	b, err := MarshalState(r.State())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRejectedCandidateChangesNothing checks a good transaction and then
// a rejected one whose first fact is valid: the rejected one leaves no
// trace (state, seq, ids), and Check alone never changes anything.
func TestReducerRejectedCandidateChangesNothing(t *testing.T) {
	r, c := NewReducerFromFile(fixtureFile(t, "pending-safe-tool.jsonl"))
	if c != nil {
		t.Fatal(c)
	}
	before := printedState(t, r)
	snapshot := r.State()

	ts := r.State().Operation.ToolCalls[0]
	content := "contents"
	result := Fact{Seq: 6, ID: ts.ResultEntryID, Timestamp: 9, Entry: &ToolResultEntry{
		StepID: ts.StepID, ToolCallID: ts.ToolCallID, Content: content, ToolName: ts.ToolName,
		ToolStartedID: ts.ToolStartedID, Result: ResultSuccess}}
	usage := Fact{Seq: 7, ID: "018f0000-0000-7000-8000-0000000000c1", Timestamp: 9, Usage: &UsageFact{
		OperationID: ts.OperationID, ToolStartedID: ts.ToolStartedID, Usage: Usage{Input: 5}}}
	badUsage := Fact{Seq: 7, ID: "018f0000-0000-7000-8000-0000000000c1", Timestamp: 9, Usage: &UsageFact{
		OperationID: ts.OperationID, AttemptID: "018f0000-0000-7000-8000-0000000000c9", Usage: Usage{Input: 5}}}

	for _, bad := range [][]Fact{
		{result, badUsage}, // INVALID_REFERENCE on the second fact
		{result, result},   // DUPLICATE_ID
		{usage},            // SEQ_MISMATCH
		{result, usage, {Seq: 8, ID: "018f0000-0000-7000-8000-0000000000c2", Timestamp: 9}}, // INVALID_FACT
	} {
		if c := r.Check(bad); c == nil {
			t.Fatalf("Check accepted %+v", bad)
		}
		if c := r.Apply(bad); c == nil {
			t.Fatalf("Apply accepted %+v", bad)
		} else if c.Line != 6 {
			t.Errorf("candidate corruption at line %d, want 6", c.Line)
		}
		if got := printedState(t, r); got != before {
			t.Fatalf("a rejected candidate changed the state:\n%s\n%s", got, before)
		}
	}
	if c := r.Check([]Fact{result, usage}); c != nil {
		t.Fatal(c)
	}
	if got := printedState(t, r); got != before {
		t.Fatal("Check changed the state")
	}
	if c := r.Apply([]Fact{result, usage}); c != nil {
		t.Fatal(c)
	}
	st := r.State()
	if st.Facts != 7 || st.Usage.Input != 5 || st.Operation.ToolCalls[0].Status != ToolCompleted ||
		!st.Operation.Assistant.Calls[0].Answered || st.Boundary != ts.ResultEntryID {
		t.Errorf("applied state: %s", printedState(t, r))
	}
	// The snapshot taken before is untouched by the commit.
	if b, _ := MarshalState(snapshot); string(b) != before {
		t.Error("a State snapshot changed after a commit")
	}
	if snapshot.Operation.ToolCalls[0].Status != ToolPending || snapshot.Operation.Assistant.Calls[0].Answered {
		t.Error("a State snapshot's operation changed after a commit")
	}
}

// TestStateSlicesAreCapped checks that appending to a snapshot's slices
// cannot write into the reducer's arrays.
func TestStateSlicesAreCapped(t *testing.T) {
	r, c := NewReducerFromFile(fixtureFile(t, "completed-tool-run.jsonl"))
	if c != nil {
		t.Fatal(c)
	}
	st := r.State()
	sys := "system"
	_ = append(st.ActiveContext, Message{Role: RoleUser, Content: &sys})
	_ = append(st.Transcript, Message{Role: RoleUser, Content: &sys})
	content := "next"
	if c := r.Apply([]Fact{{Seq: 11, ID: "018f0000-0000-7000-8000-0000000000d1", Timestamp: 1, Entry: &UserEntry{Content: content}}}); c != nil {
		t.Fatal(c)
	}
	got := r.State()
	if *got.ActiveContext[len(got.ActiveContext)-1].Content != "next" || *got.Transcript[4].Content != "next" {
		t.Error("a caller's append reached the reducer's arrays")
	}
	if len(st.Transcript) != 4 {
		t.Error("the earlier snapshot grew")
	}
}

// TestNewReducer checks the state of a new session.
func TestNewReducer(t *testing.T) {
	h := Header{ID: "018f0000-0000-7000-8000-000000000001", CreatedAt: 1, Cwd: "/w", Provider: "p", Model: "m", EnvironmentIdentity: "e"}
	r := NewReducer(h)
	st := r.State()
	if st.RepairedLength != int64(len(EncodeHeader(h))) || !st.Idle() || st.Facts != 0 || st.Transcript == nil || st.ActiveContext == nil {
		t.Fatalf("new state: %+v", st)
	}
	want, c := Reduce(EncodeHeader(h))
	if c != nil {
		t.Fatal(c)
	}
	a, _ := MarshalState(st)
	b, _ := MarshalState(want)
	if string(a) != string(b) {
		t.Errorf("NewReducer state %s, Reduce of its header %s", a, b)
	}
	if c := r.Apply(nil); c == nil || c.Code != CorruptEmptyTransaction {
		t.Errorf("Apply(nil) = %v", c)
	}
	var nilRun *RunStarted
	var nilUser *UserEntry
	for _, f := range []Fact{
		{Seq: 1, ID: "018f0000-0000-7000-8000-000000000002", Record: nilRun},
		{Seq: 1, ID: "018f0000-0000-7000-8000-000000000002", Entry: nilUser},
		{Seq: 1, ID: "018f0000-0000-7000-8000-000000000002"},
	} {
		if c := r.Check([]Fact{f}); c == nil || c.Code != CorruptInvalidFact {
			t.Errorf("Check(%+v) = %v, want INVALID_FACT", f, c)
		}
	}
}
