package sessionview

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/fork"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// A fork's origin keeps its seq even when the ids need 12 characters to
// stay unique (two sessions started in the same millisecond) and the model
// name is long: an origin cut to "…" names no place to go back to. The
// table still fits 100 columns.
func TestSessionTableNeverCutsAForkOrigin(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".tiny-agent", "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	src := "01a24c0d-2470-7000-8000-000000000001"
	child := "01a24c0d-24f0-7000-8000-000000000002"
	childPath := filepath.Join(dir, child+".jsonl")
	if err := os.WriteFile(childPath, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := fork.WriteOrigin(childPath, fork.Origin{Source: src, At: 123456}); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 6, 15, 50, 59, 0, time.UTC)
	sums := []store.Summary{
		{ID: child, Path: childPath, Started: at, Model: "openai/gpt-5.6-luna", LastPrompt: "turn one", State: store.SummaryIdle, Size: 10137},
		{ID: src, Path: filepath.Join(dir, src+".jsonl"), Started: at, Model: "openai/gpt-5.6-luna", LastPrompt: "turn three", State: store.SummaryIdle, Size: 26419},
	}
	var b bytes.Buffer
	if err := writeSessionTable(&b, sums, &listing{}); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`01a24c0d-247@123456\n`).MatchString(b.String()) {
		t.Fatalf("the fork origin was cut:\n%s", b.String())
	}
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if n := len([]rune(line)); n > tableWidth {
			t.Fatalf("a line of %d columns:\n%s", n, b.String())
		}
	}
}
