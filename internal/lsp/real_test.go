package lsp

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// needServer skips without the server's program; .ci/run installs every
// one of them, so CI never skips.
func needServer(t testing.TB, program string) {
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

func writeFiles(t testing.TB, dir string, files map[string]string) {
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
func edit(t testing.TB, m *Manager, path, text string) string {
	t.Helper()
	old, err := os.ReadFile(path)
	ch := Change{Path: path, Known: true, Before: string(old), Absent: os.IsNotExist(err)}
	m.Prepare(ch)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return m.Check(context.Background(), []Change{ch})
}

// language is one server's case: a project, a file of it, and its text
// clean, with a string put into an int variable on line 4, and clean
// again differently.
type language struct {
	program    string
	files      map[string]string
	file       string
	bad, clean string
}

var languages = map[string]language{
	"go": {program: "gopls",
		files: map[string]string{"go.mod": "module example.com/m\n\ngo 1.22\n",
			"main.go": "package main\n\nfunc main() {\n\tvar n int = 1\n\t_ = n\n}\n"},
		file:  "main.go",
		bad:   "package main\n\nfunc main() {\n\tvar n int = \"x\"\n\t_ = n\n}\n",
		clean: "package main\n\nfunc main() {\n\tvar n int = 2\n\t_ = n\n}\n"},
	"python": {program: "pyright-langserver",
		files: map[string]string{"pyrightconfig.json": "{}\n",
			"main.py": "def main() -> None:\n    pass\n\n\nn: int = 1\n"},
		file:  "main.py",
		bad:   "def main() -> None:\n    pass\n\nn: int = \"x\"\n",
		clean: "def main() -> None:\n    pass\n\nn: int = 2\n"},
	"typescript": {program: "typescript-language-server",
		files: map[string]string{"tsconfig.json": "{\"compilerOptions\": {\"strict\": true}}\n",
			"main.ts": "export function main(): void {}\n\n\nlet n: number = 1;\nexport { n };\n"},
		file:  "main.ts",
		bad:   "export function main(): void {}\n\n\nlet n: number = \"x\";\nexport { n };\n",
		clean: "export function main(): void {}\n\n\nlet n: number = 2;\nexport { n };\n"},
}

// TestStringIntoInt: in each language, the server's error for the line
// reaches the text appended to the result; a clean edit appends nothing.
func TestStringIntoInt(t *testing.T) {
	for name, l := range languages {
		t.Run(name, func(t *testing.T) {
			needServer(t, l.program)
			dir := t.TempDir()
			writeFiles(t, dir, l.files)
			m := NewManager(Options{WorkDir: dir, Settings: patient()})
			defer m.Close()
			path := filepath.Join(dir, l.file)
			got := edit(t, m, path, l.bad)
			t.Logf("bad edit:%s", got)
			if !strings.Contains(got, l.file+":4:") || !strings.Contains(got, " error ") {
				t.Fatalf("the error of line 4 is not reported:\n%s", got)
			}
			if got := edit(t, m, path, l.clean); got != "" {
				t.Fatalf("a clean edit reported:\n%s", got)
			}
		})
	}
}

// TestEditsInARow: a running server's answers to clean and bad edits in
// turn, each compared with the one before (typescript-language-server
// says nothing of a change that leaves a file clean: the client reopens
// the file for it).
func TestEditsInARow(t *testing.T) {
	for name, l := range languages {
		t.Run(name, func(t *testing.T) {
			needServer(t, l.program)
			dir := t.TempDir()
			writeFiles(t, dir, l.files)
			m := NewManager(Options{WorkDir: dir, Settings: patient()})
			defer m.Close()
			path := filepath.Join(dir, l.file)
			for i, text := range []string{l.clean, l.bad, l.clean, l.clean + "\n", l.bad} {
				got := edit(t, m, path, text)
				if bad := text == l.bad; bad != strings.Contains(got, l.file+":4:") || !bad && got != "" {
					t.Fatalf("edit %d (bad: %v) reported:\n%s", i, bad, got)
				}
			}
		})
	}
}

// gopls killed in the middle of the request for a change's diagnostics
// (stopped first, so that it cannot answer before it dies): the result
// says so, and the next change starts it again and gets its answer.
func TestGoplsKilledMidRequest(t *testing.T) {
	l := languages["go"]
	needServer(t, l.program)
	dir := t.TempDir()
	writeFiles(t, dir, l.files)
	m := NewManager(Options{WorkDir: dir, Settings: patient()})
	defer m.Close()
	path := filepath.Join(dir, l.file)
	if got := edit(t, m, path, l.clean); got != "" {
		t.Fatalf("clean edit: %s", got)
	}
	st := m.Status()
	if len(st) != 1 || st[0].PID == 0 {
		t.Fatalf("status %+v", st)
	}
	pid := st[0].PID
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() { done <- edit(t, m, path, l.bad) }()
	m.mu.Lock()
	c := m.slots[slotKey{"go", dir}].cur.c
	m.mu.Unlock()
	for text, _ := c.text(path); text != l.bad; text, _ = c.text(path) {
		sleepTick() // until the change was sent: the wait for its answer is on
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if got := <-done; !strings.Contains(got, "No diagnostics for main.go: gopls exited") || !strings.Contains(got, "started again") {
		t.Fatalf("the kill is not reported:\n%s", got)
	}
	got := edit(t, m, path, l.bad+"\nvar m int = \"y\"\n")
	if !strings.Contains(got, "main.go:8:") {
		t.Fatalf("after the restart, no error for line 8:\n%s", got)
	}
	if st := m.Status(); st[0].Starts != 2 || st[0].PID == pid {
		t.Fatalf("status after the restart %+v", st)
	}
}
