package ui

import (
	"strings"
	"testing"
)

// TestNoticeIsPrintedAboveTheLiveArea: a line from outside the agent (an
// MCP server that went away) goes into the scrollback through the UI
// while it is attached, never straight to the terminal; detached, the
// caller is told to print it itself.
func TestNoticeIsPrintedAboveTheLiveArea(t *testing.T) {
	if NewObserver("").Notice("nobody attached") {
		t.Fatal("a detached observer took the notice")
	}
	var nilObs *Observer
	if nilObs.Notice("nil") {
		t.Fatal("a nil observer took the notice")
	}
	h, eng := startedRun(t)
	line := "MCP fx: the server exited (exit status 3); its tools fail from now on"
	if !eng.obs.Notice(line + "\x1b[2J") {
		t.Fatal("the attached UI did not take the notice")
	}
	h.until("the notice in the scrollback", h.printedLine(line))
	if out := h.output(); strings.Contains(out, "\x1b[2J") {
		t.Fatalf("a control sequence of the notice reached the terminal: %q", out)
	}
}
