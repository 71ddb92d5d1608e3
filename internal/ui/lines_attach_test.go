package ui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/attach"
	"github.com/tiny-agent/tiny-go/internal/commands"
	"github.com/tiny-agent/tiny-go/internal/ui/uitest"
)

// Line mode takes the same custom commands and @mentions as the terminal.
func TestRunLinesCommandsAndMentions(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("NOTE BODY\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "bin.dat"), []byte{0, 1, 2}, 0o644)
	eng := &uitest.Engine{}
	out := &syncBuffer{}
	err := RunLines(context.Background(), Options{
		In:       strings.NewReader("/sum @notes.txt\nlook at @bin.dat\n/help\n"),
		Out:      out,
		Engine:   eng,
		Commands: []commands.Command{{Name: "sum", Description: "Summarize", Body: "Summarize $ARGUMENTS."}},
		Mentions: attach.NewIndex(dir),
	})
	if err != nil {
		t.Fatal(err)
	}
	prompts := eng.Prompts()
	if len(prompts) != 1 || prompts[0] != "Summarize @notes.txt.\n\n<file path=\"notes.txt\">\nNOTE BODY\n</file>" {
		t.Fatalf("prompts %q", prompts)
	}
	for _, want := range []string{"⎿ attached notes.txt (10 bytes)", "@bin.dat: a binary file", "/sum                   Summarize"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
