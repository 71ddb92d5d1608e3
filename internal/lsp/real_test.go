package lsp

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// needServer skips without the server's program; .ci/run installs every
// one of them, so CI never skips.
func needServer(t *testing.T, program string) {
	t.Helper()
	if _, err := exec.LookPath(program); err != nil {
		t.Skipf("%s is not on PATH (.ci/run installs it)", program)
	}
}

// testPath puts the servers of internal/lsp/testdata (npm ci) and GOBIN
// on PATH.
func init() {
	extra := []string{}
	if abs, err := filepath.Abs("testdata/node_modules/.bin"); err == nil {
		extra = append(extra, abs)
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		extra = append(extra, filepath.Join(strings.TrimSpace(string(out)), "bin"))
	}
	os.Setenv("PATH", strings.Join(append(extra, os.Getenv("PATH")), string(os.PathListSeparator)))
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// patient are settings whose bounds no server on a loaded machine
// reaches: these tests are about what the servers say, not how fast.
func patient() Settings {
	s := DefaultSettings()
	s.Wait, s.StartWait = 2*time.Minute, 2*time.Minute
	return s
}

// edit changes a file the way the write tool does, with Prepare before
// and Check after, and returns what Check appends.
func edit(t *testing.T, m *Manager, path, text string) string {
	t.Helper()
	old, err := os.ReadFile(path)
	ch := Change{Path: path, Known: true, Before: string(old), Absent: os.IsNotExist(err)}
	m.Prepare(ch)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return m.Check(context.Background(), []Change{ch})
}

func TestGoplsStringIntoInt(t *testing.T) {
	needServer(t, "gopls")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"go.mod":  "module example.com/m\n\ngo 1.22\n",
		"main.go": "package main\n\nfunc main() {\n\tvar n int = 1\n\t_ = n\n}\n",
	})
	m := NewManager(Options{WorkDir: dir, Settings: patient()})
	defer m.Close()
	path := filepath.Join(dir, "main.go")
	got := edit(t, m, path, "package main\n\nfunc main() {\n\tvar n int = \"x\"\n\t_ = n\n}\n")
	t.Logf("bad edit:%s", got)
	if !strings.Contains(got, "main.go:4:") || !strings.Contains(got, " error ") {
		t.Fatalf("the error of line 4 is not reported:\n%s", got)
	}
	got = edit(t, m, path, "package main\n\nfunc main() {\n\tvar n int = 2\n\t_ = n\n}\n")
	if got != "" {
		t.Fatalf("a clean edit reported:\n%s", got)
	}
}
