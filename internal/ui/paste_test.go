package ui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// A long paste folds into a placeholder the model never sees; a 50 MB
// paste is refused with one line and leaves the input as it was.
func TestPasteFoldsAndRefuses(t *testing.T) {
	eng := newStub(nil)
	h := newHarness(t, eng, nil)
	h.typeText("read ")
	h.send(tea.PasteMsg{Content: strings.Repeat("x", 1500)})
	if v := h.m.input.Value(); v != "read [Pasted text #1 +1 lines]" {
		t.Fatalf("input %q", v)
	}
	h.send(tea.PasteMsg{Content: strings.Repeat("y\n", 25<<20)})
	h.until("the refusal", h.printedLine("Paste not taken: 50.0 MB is more than the 4.0 MB a paste may have"))
	if v := h.m.input.Value(); v != "read [Pasted text #1 +1 lines]" {
		t.Fatalf("input after the refused paste %q", v)
	}
	h.send(tea.PasteMsg{Content: "short\r\npaste"})
	h.press(keyEnter)
	h.until("the run", func() bool { return len(eng.promptsSeen()) == 1 })
	if got := eng.promptsSeen()[0]; got != "read "+strings.Repeat("x", 1500)+"short\npaste" {
		t.Fatalf("sent %.80q…", got)
	}
	if strings.Contains(h.output(), "xxxx") {
		t.Fatal("the folded paste was echoed")
	}
}
