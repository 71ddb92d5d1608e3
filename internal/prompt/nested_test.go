package prompt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		p = filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The files of each directory from below the working directory down to
// the one worked in come once, in order, with their imports beneath the
// tree; nothing outside the tree, through a symlink or hidden by a Read
// deny rule comes with them, so a planted file gives the model nothing a
// command could not read.
func TestNestedInstructions(t *testing.T) {
	base := t.TempDir()
	cwd := filepath.Join(base, "proj")
	writeTree(t, base, map[string]string{
		"secret.txt":                        "OUTSIDE-SECRET\n",
		"proj/CLAUDE.md":                    "TOP-ALREADY-IN-SYSTEM\n",
		"proj/api/CLAUDE.md":                "API-RULES see @../docs/api.md and @/etc/hostname and @~/x.md and @../../secret.txt\n",
		"proj/docs/api.md":                  "API-DOC\n",
		"proj/api/v2/AGENTS.md":             "V2-AGENTS\n",
		"proj/api/v2/.claude/CLAUDE.md":     "V2-DOT-CLAUDE\n",
		"proj/api/v2/handler.go":            "package v2\n",
		"proj/private/CLAUDE.md":            "PRIVATE-HIDDEN\n",
		"proj/web/x.ts":                     "x\n",
		"proj/linked/other/placeholder.txt": "x\n",
	})
	if err := os.Symlink(filepath.Join(base, "secret.txt"), filepath.Join(cwd, "web", "CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(base, "proj", "api"), filepath.Join(cwd, "linked", "via")); err != nil {
		t.Fatal(err)
	}
	hidden := func() []string { return []string{filepath.Join(cwd, "private")} }
	n := NewNested(cwd, hidden, nil)

	if got := n.For("README.md"); got != "" {
		t.Fatalf("the working directory's own files are in the system message: %q", got)
	}
	got := n.For(filepath.Join(cwd, "api", "v2", "handler.go"))
	last := -1
	for _, w := range []string{"api/CLAUDE.md", "API-RULES", "docs/api.md", "API-DOC", "api/v2/.claude/CLAUDE.md", "V2-DOT-CLAUDE", "api/v2/AGENTS.md", "V2-AGENTS"} {
		at := strings.Index(got, w)
		if at <= last {
			t.Fatalf("%s missing or out of order:\n%s", w, got)
		}
		last = at
	}
	for _, no := range []string{"TOP-ALREADY", "OUTSIDE-SECRET"} {
		if strings.Contains(got, no) {
			t.Fatalf("%s given:\n%s", no, got)
		}
	}
	if !strings.HasPrefix(got, "\n\n<system-reminder>\n") || !strings.HasSuffix(got, "</system-reminder>") {
		t.Fatalf("not one reminder:\n%q", got)
	}
	if again := n.For("api/other.go"); again != "" {
		t.Fatalf("given twice: %q", again)
	}
	for _, p := range []string{"web/x.ts", "private/a.txt", "linked/via/v2/x.go", "../outside.go", "/etc/passwd"} {
		if s := n.For(p); s != "" {
			t.Fatalf("%s gave %q", p, s)
		}
	}

	// A resume starts from what the active context already has.
	m := NewNested(cwd, nil, []string{"result" + got})
	if s := m.For("api/v2/z.go"); s != "" {
		t.Fatalf("given again after a resume: %q", s)
	}
	if s := m.For("private/z.go"); !strings.Contains(s, "PRIVATE-HIDDEN") {
		t.Fatalf("without a deny rule the file comes: %q", s)
	}
}
