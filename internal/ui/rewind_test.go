package ui

import (
	"context"
	"strings"
	"testing"
	"time"
)

func TestParseRewindCommand(t *testing.T) {
	if c := parseCommand("/rewind 2 files", nil); c.kind != cmdRewind || c.text != "2 files" {
		t.Fatalf("parseCommand = %+v", c)
	}
}

// fakeRewinder records what /rewind asked for.
type fakeRewinder struct {
	planned []RewindRequest
	applied int
}

func (f *fakeRewinder) Turns() ([]RewindTurn, error) {
	return []RewindTurn{{N: 1, Prompt: "first prompt", At: time.Unix(0, 0)}, {N: 2, Prompt: "second prompt", At: time.Unix(60, 0)}}, nil
}

func (f *fakeRewinder) Plan(_ context.Context, req RewindRequest) (*RewindPlan, error) {
	f.planned = append(f.planned, req)
	return &RewindPlan{Request: req, Preview: []string{"Rewinding files to before turn 2 will:", "  restore   a.txt"}}, nil
}

func (f *fakeRewinder) Apply(context.Context, *RewindPlan) (RewindResult, error) {
	f.applied++
	return RewindResult{Lines: []string{"Files put back to before turn 2", "Now in session fork-1"}, SessionID: "fork-1", Prompt: "second prompt"}, nil
}

// In the terminal UI /rewind lists the turns, previews, waits for y, and
// after a conversation rewind offers the rewound prompt in the input.
func TestRewindInTerminalUI(t *testing.T) {
	h := newHarness(t, newStub(nil), nil)
	rw := &fakeRewinder{}
	h.m.rewinder = rw
	h.typeText("/rewind")
	h.press(keyEnter)
	h.until("the list of turns", h.printedLine("second prompt"))
	h.typeText("2 files")
	h.press(keyEnter)
	h.until("the preview", h.printedLine("Rewind? y to do it"))
	h.typeText("n")
	h.press(keyEnter)
	h.until("the cancel", h.printedLine("Rewind cancelled; nothing changed."))
	if rw.applied != 0 || len(rw.planned) != 1 || rw.planned[0].Conversation {
		t.Fatalf("planned %+v applied %d", rw.planned, rw.applied)
	}
	h.typeText("/rewind 2")
	h.press(keyEnter)
	h.until("the second preview", func() bool { return strings.Count(stripANSI(h.output()), "Rewind? y") == 2 })
	h.typeText("y")
	h.press(keyEnter)
	h.until("the result", h.printedLine("Now in session fork-1"))
	if rw.applied != 1 || h.m.banner.SessionID != "fork-1" || h.m.input.Value() != "second prompt" {
		t.Fatalf("applied %d, session %s, input %q", rw.applied, h.m.banner.SessionID, h.m.input.Value())
	}
	// After the list, anything but a turn cancels.
	h.m.input.Reset()
	h.typeText("/rewind")
	h.press(keyEnter)
	h.typeText("never mind")
	h.press(keyEnter)
	h.until("the second cancel", func() bool { return strings.Count(stripANSI(h.output()), "Rewind cancelled") == 2 })
	if len(rw.planned) != 2 {
		t.Fatalf("planned %+v", rw.planned)
	}
	if !strings.Contains(stripANSI(h.output()), "  restore   a.txt") {
		t.Fatalf("preview columns lost:\n%s", h.output())
	}
}
