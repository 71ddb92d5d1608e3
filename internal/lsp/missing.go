package lsp

import (
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"
)

// installs is how to install each built-in server, by its name, for the
// hint given when none of its programs is on PATH.
var installs = map[string]string{
	"go":         "go install golang.org/x/tools/gopls@latest",
	"python":     "npm install -g pyright",
	"typescript": "npm install -g typescript-language-server typescript",
	"rust":       "rustup component add rust-analyzer",
	"c":          "apt install clangd (or your OS's clangd package)",
}

// Missing is a built-in server none of whose programs is on PATH.
type Missing struct {
	Name, Program, Install string
	Languages              map[string]string
}

// Hint is the one line that names the missing server and how to install
// it.
func (m Missing) Hint() string {
	return m.Program + " is not on PATH: install it with `" + m.Install + "`."
}

// Missing lists the built-in servers that are neither switched off nor
// configured with a command, and none of whose programs is on PATH.
func (s Settings) Missing(lookPath func(string) (string, error)) []Missing {
	if s.Off {
		return nil
	}
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	var out []Missing
	for _, b := range builtins {
		e, configured := s.entries[b.name]
		if cmd, _ := e.command(); configured && (e.Off || cmd != nil) {
			continue
		}
		found := false
		for _, c := range b.commands {
			if _, err := lookPath(c[0]); err == nil {
				found = true
				break
			}
		}
		if b.name == "typescript" && pathTypeScript(lookPath) != "" {
			found = true
		}
		if !found {
			out = append(out, Missing{Name: b.name, Program: b.commands[0][0], Install: installs[b.name], Languages: b.languages})
		}
	}
	return out
}

// missingFor is the missing server that would check path, if any.
func missingFor(missing []Missing, path string) (Missing, bool) {
	ext := strings.ToLower(filepath.Ext(path))
	for _, m := range missing {
		if _, ok := m.Languages[ext]; ok {
			return m, true
		}
	}
	return Missing{}, false
}

// maxScan bounds the files ProjectMissing looks at: a hint is not worth
// a walk of a huge tree.
const maxScan = 5000

// ProjectMissing is those of missing whose languages the files under
// dir use (a bounded walk that skips hidden and vendored directories).
func ProjectMissing(dir string, missing []Missing) []Missing {
	if len(missing) == 0 {
		return nil
	}
	used := map[string]bool{}
	seen := 0
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if seen++; seen > maxScan {
			return filepath.SkipAll
		}
		if d.IsDir() {
			n := d.Name()
			if p != dir && (strings.HasPrefix(n, ".") || n == "node_modules" || n == "vendor" || n == "target") {
				return filepath.SkipDir
			}
			return nil
		}
		if m, ok := missingFor(missing, p); ok {
			used[m.Name] = true
		}
		return nil
	})
	var out []Missing
	for _, m := range missing {
		if m.Name == "typescript" && projectTypeScript(dir) != "" {
			continue // the project's own TypeScript 7 serves it
		}
		if used[m.Name] {
			out = append(out, m)
		}
	}
	return out
}
