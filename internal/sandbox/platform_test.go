package sandbox

import (
	"strings"
	"testing"
)

// The macOS line is read here, on Linux, where CI runs.
func TestPlatformLine(t *testing.T) {
	if line := PlatformLine("linux", true); line != "" {
		t.Fatalf("linux says %q", line)
	}
	for _, confined := range []bool{true, false} {
		line := PlatformLine("darwin", confined)
		if strings.ContainsAny(line, "\n\r") || !strings.HasPrefix(line, "tiny-go: on macOS ") {
			t.Fatalf("not one tiny-go line: %q", line)
		}
		for _, want := range []string{"no overlay transaction", "no namespaces", "outlive"} {
			if !strings.Contains(line, want) {
				t.Errorf("confined=%v: %q does not say %q", confined, line, want)
			}
		}
		if got := strings.Contains(line, "Seatbelt"); got != confined {
			t.Errorf("confined=%v, yet the line says: %q", confined, line)
		}
	}
}
