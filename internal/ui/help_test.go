package ui

import (
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/commands"
)

// TestHelpListsEveryCommandAndShiftTab: /help names every built-in and the
// Shift+Tab key that cycles the approval mode (they were missing).
func TestHelpListsEveryCommandAndShiftTab(t *testing.T) {
	text := strings.Join(helpLines(nil), "\n")
	for _, c := range commands.Builtins {
		if !strings.Contains(text, "  /"+c.Name) {
			t.Errorf("/help leaves out /%s", c.Name)
		}
	}
	for _, mode := range []string{"Shift+Tab", "ask", "auto", "plan", "edits", "review"} {
		if !strings.Contains(text, mode) {
			t.Errorf("/help leaves out %q:\n%s", mode, text)
		}
	}
}
