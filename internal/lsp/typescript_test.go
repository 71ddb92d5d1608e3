package lsp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The typescript package node would resolve decides: 7 and later serve
// the protocol with their own tsc, older ones are typescript-language-
// server's; a nearer package hides a farther one.
func TestProjectTypeScriptVersion(t *testing.T) {
	dir := t.TempDir()
	pkg := func(at, version string) {
		writeFiles(t, filepath.Join(dir, at), map[string]string{
			"node_modules/typescript/package.json": `{"name":"typescript","version":"` + version + `"}`,
			"node_modules/typescript/bin/tsc":      "#!/usr/bin/env node\n",
		})
	}
	pkg("new", "7.0.2")
	pkg("old", "5.9.3")
	pkg("new/inner-old", "5.4.0")
	writeFiles(t, dir, map[string]string{"new/src/app/x.ts": "", "none/x.ts": ""})
	for at, want := range map[string]string{
		"new/src/app":        filepath.Join(dir, "new/node_modules/typescript/bin/tsc"),
		"new":                filepath.Join(dir, "new/node_modules/typescript/bin/tsc"),
		"old":                "",
		"new/inner-old/deep": "",
		"none":               "",
	} {
		if got := projectTypeScript(filepath.Join(dir, at)); got != want {
			t.Errorf("%s: %q, want %q", at, got, want)
		}
	}
	// No hint to install typescript-language-server for a project on 7.
	ts := []Missing{{Name: "typescript", Program: "typescript-language-server", Languages: map[string]string{".ts": "typescript"}}}
	if got := ProjectMissing(filepath.Join(dir, "new"), ts); len(got) != 0 {
		t.Errorf("a TypeScript 7 project is told to install %v", got)
	}
	if got := ProjectMissing(filepath.Join(dir, "none"), ts); len(got) != 1 {
		t.Errorf("a project without TypeScript gets no hint: %v", got)
	}
	// A tsc on PATH counts when the package it links into is 7.
	lookPath := func(string) (string, error) { return filepath.Join(dir, "new/node_modules/typescript/bin/tsc"), nil }
	if got := pathTypeScript(lookPath); got == "" {
		t.Error("a TypeScript 7 tsc on PATH is not used")
	}
	lookPath = func(string) (string, error) { return filepath.Join(dir, "old/node_modules/typescript/bin/tsc"), nil }
	if got := pathTypeScript(lookPath); got != "" {
		t.Errorf("a TypeScript 5 tsc on PATH is used: %q", got)
	}
}

// A project on TypeScript 7 (`typescript` 7.0.2 from npm, which has no
// tsserver.js) gets diagnostics after an edit from its own `tsc --lsp`,
// whether or not typescript-language-server is on PATH.
func TestTypeScript7Project(t *testing.T) {
	modules, err := filepath.Abs("testdata/ts7/node_modules")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(modules, "typescript", "package.json")); err != nil {
		t.Skip("npm ci --prefix internal/lsp/testdata/ts7 (.ci/run does)")
	}
	l := languages["typescript"]
	for name, lookPath := range map[string]func(string) (string, error){
		"without typescript-language-server": func(p string) (string, error) { return "", os.ErrNotExist },
		"with typescript-language-server":    nil,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, l.files)
			if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
				t.Fatal(err)
			}
			m := NewManager(Options{WorkDir: dir, Settings: patient(), LookPath: lookPath})
			defer m.Close()
			path := filepath.Join(dir, l.file)
			got := edit(t, m, path, l.bad)
			if !strings.Contains(got, l.file+":4:") || !strings.Contains(got, " error ") {
				t.Fatalf("the error of line 4 is not reported:\n%s", got)
			}
			if got := edit(t, m, path, l.clean); got != "" {
				t.Fatalf("a clean edit reported:\n%s", got)
			}
			log, _ := os.ReadFile(filepath.Join(dir, ".tiny-agent", "lsp", "typescript.log"))
			if !strings.Contains(string(log), "node_modules/.bin/tsc --lsp --stdio") {
				t.Fatalf("not the project's tsc:\n%s", log)
			}
		})
	}
}
