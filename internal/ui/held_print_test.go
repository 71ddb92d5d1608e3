package ui

import (
	"strings"
	"testing"
)

// TestPrintWaitsForTheNewSize: text handed to the terminal while the
// terminal's size is no longer the one the model knows (resized, the
// WindowSizeMsg not yet handled) is not printed; it goes back to the head
// of the queue and out, in order, once a frame has been drawn at the new
// size.
func TestPrintWaitsForTheNewSize(t *testing.T) {
	h := newHarness(t, newStub(nil), nil)
	h.until("the banner", h.printedLine("sess-1"))

	w, ht := 80, 24
	h.m.termSize = func() (int, int, bool) { return w, ht, true }
	if _, held := h.m.printAtThisSize("same size")().(heldPrintMsg); held {
		t.Fatal("held at an unchanged size")
	}
	w, ht = 70, 20
	msg, held := h.m.printAtThisSize("line A\nline B")().(heldPrintMsg)
	if !held || msg.text != "line A\nline B" {
		t.Fatalf("printed at a stale size: %#v", msg)
	}

	// The held text comes back while more waits behind it.
	h.m.outbox = append(h.m.outbox, "line C")
	h.send(msg)
	if h.m.ready || strings.Join(h.m.outbox, "|") != "line A|line B|line C" {
		t.Fatalf("after the hold: ready %v, queue %q", h.m.ready, h.m.outbox)
	}
	h.m.termSize = nil
	h.until("the held lines", h.printedLine("line C"))
	out := stripANSI(h.output())
	a, b, c := strings.Index(out, "line A"), strings.Index(out, "line B"), strings.Index(out, "line C")
	if a < 0 || !(a < b && b < c) || strings.Count(out, "line A") != 1 {
		t.Fatalf("held lines out of order or doubled:\n%s", out)
	}
}
