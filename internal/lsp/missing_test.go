package lsp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Without gopls on PATH, the diagnostics tool says, on its one line,
// that gopls is missing and how to install it; with Go's server switched
// off, it does not offer to install it.
func TestDiagnosticsNamesMissingServer(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	none := func(string) (string, error) { return "", errors.New("not found") }
	m := NewManager(Options{WorkDir: dir, Settings: DefaultSettings(), LookPath: none})
	defer m.Close()
	got := m.Report(context.Background(), "main.go")
	want := "No language server checks .go files here (none found on PATH). gopls is not on PATH: install it with `go install golang.org/x/tools/gopls@latest`."
	if got != want {
		t.Fatalf("Report = %q\nwant     %q", got, want)
	}
	if got := m.Report(context.Background(), "notes.txt"); strings.Contains(got, "install") {
		t.Fatalf("a file no built-in server checks gets an install hint: %q", got)
	}

	off := DefaultSettings()
	if err := off.ApplyTable([]byte(`{"go": {"off": true}}`)); err != nil {
		t.Fatal(err)
	}
	m2 := NewManager(Options{WorkDir: dir, Settings: off, LookPath: none})
	defer m2.Close()
	if got := m2.Report(context.Background(), "main.go"); strings.Contains(got, "gopls") {
		t.Fatalf("go is switched off, yet: %q", got)
	}
}

// ProjectMissing keeps the missing servers of the languages the project
// uses: a Go module gets gopls's hint, not rust-analyzer's.
func TestProjectMissing(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{"go.mod": "module m\n", "cmd/x/main.go": "package main\n", ".hidden/a.rs": ""} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	all := DefaultSettings().Missing(func(string) (string, error) { return "", errors.New("not found") })
	if len(all) != len(builtins) {
		t.Fatalf("Missing = %d servers, want all %d", len(all), len(builtins))
	}
	for _, m := range all {
		if m.Install == "" {
			t.Fatalf("%s has no install command", m.Name)
		}
	}
	got := ProjectMissing(dir, all)
	if len(got) != 1 || got[0].Program != "gopls" {
		t.Fatalf("ProjectMissing = %+v, want gopls only", got)
	}
}
