package prompt

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Imports chain at most MaxImportDepth deep; an e-mail address, a code
// span and a missing file are not imports; a file too large to import is
// a problem line, not a failure.
func TestInstructionImports(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("AGENTS.md", "start @f1.md, mail a@f9.md or `@f8.md`; @missing.md and @big.md\n")
	for i := 1; i <= 8; i++ {
		write(fmt.Sprintf("f%d.md", i), fmt.Sprintf("F%d @f%d.md\n", i, i+1))
	}
	write("big.md", strings.Repeat("x", MaxProjectInstructionsBytes+1))
	ins, err := ReadInstructions(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range ins.Files {
		names = append(names, filepath.Base(f.Path))
	}
	if got := strings.Join(names, " "); got != "AGENTS.md f1.md f2.md f3.md f4.md f5.md" {
		t.Errorf("files %q", got)
	}
	if len(ins.Problems) != 1 || !strings.Contains(ins.Problems[0], "big.md") {
		t.Errorf("problems %q", ins.Problems)
	}
}
