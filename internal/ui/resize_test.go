package ui

import (
	"testing"

	tea "charm.land/bubbletea/v2"
)

// TestReflowEndsAtTheNewestSize: tmux resizes one dimension at a time, so
// a second size can arrive while a narrowing resize is held back for the
// cursor move; the program must end at the newest size, not have the held
// (older) one applied after it.
func TestReflowEndsAtTheNewestSize(t *testing.T) {
	h := newHarness(t, newStub(nil), nil)
	h.m.reflows = true
	h.m.View() // the frame a reflow re-wraps
	first := resizeFilter(h.m, tea.WindowSizeMsg{Width: 70, Height: 24})
	if _, held := first.(reflowMsg); !held {
		t.Fatalf("a narrowing resize was not held back: %#v", first)
	}
	h.send(first)
	second := resizeFilter(h.m, tea.WindowSizeMsg{Width: 70, Height: 20})
	if ws, ok := second.(tea.WindowSizeMsg); !ok || ws.Height != 20 {
		t.Fatalf("the second resize: %#v", second)
	}
	h.send(second)
	done := resizeFilter(h.m, reflowDoneMsg{})
	if ws, ok := done.(tea.WindowSizeMsg); !ok || ws.Width != 70 || ws.Height != 20 {
		t.Fatalf("the reflow ended with %#v, want the newest size 70x20", done)
	}
	h.send(done)
	if h.m.width != 70 || h.m.height != 20 {
		t.Fatalf("model size %dx%d, want 70x20", h.m.width, h.m.height)
	}
}

// TestStaleReadyDoesNotStopOutput: two resizes in a row start two "a frame
// was drawn" timers; when the older one fires after the newer one, output
// must go on (it stopped for good: the older timer set ready to false).
func TestStaleReadyDoesNotStopOutput(t *testing.T) {
	h := newHarness(t, newStub(nil), nil)
	h.until("the banner", h.printedLine("sess-1"))
	h.m.Update(tea.WindowSizeMsg{Width: 120, Height: 30})
	older := h.m.readyGen
	h.m.Update(tea.WindowSizeMsg{Width: 120, Height: 34})
	newer := h.m.readyGen
	h.m.Update(readyMsg{gen: newer})
	h.m.Update(readyMsg{gen: older})
	if !h.m.ready {
		t.Fatal("an older size's readyMsg took readiness back")
	}
	h.m.print("after both resizes")
	h.send(printedMsg{}) // runs flush
	h.until("the line printed after the resizes", h.printedLine("after both resizes"))
}
