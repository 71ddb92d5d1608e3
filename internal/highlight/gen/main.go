// Command gen copies the chroma lexer definitions tiny-go highlights with
// from the module cache into internal/highlight/lexers, beside chroma's
// licence. The XML files are chroma's own (MIT), of the version go.mod
// requires; TestLexersMatchModule fails when they drift apart.
//
// It runs from internal/highlight: go generate ./internal/highlight
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

const module = "github.com/alecthomas/chroma/v2"

// lexers are the definitions copied from the module's lexers/embedded.
// Go and Markdown are not among them: chroma writes those lexers in Go,
// inside its lexers package, and tiny-go has its own (golang.go,
// markdown.go). docker and makefile embed Bash, docker JSON; html
// embeds CSS and JavaScript.
var lexers = []string{
	"bash", "c", "c++", "c#", "css", "diff", "docker", "html", "ini",
	"java", "javascript", "json", "kotlin", "lua", "makefile",
	"protocol_buffer", "python", "ruby", "rust", "sql", "swift", "toml",
	"typescript", "xml", "yaml",
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run() error {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module).Output()
	if err != nil {
		return fmt.Errorf("go list -m %s: %w (run go mod download first)", module, err)
	}
	dir := strings.TrimSpace(string(out))
	if err := os.RemoveAll("lexers"); err != nil {
		return err
	}
	if err := os.MkdirAll("lexers", 0o755); err != nil {
		return err
	}
	copyFile := func(from, to string) error {
		data, err := os.ReadFile(filepath.Join(dir, from))
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join("lexers", to), data, 0o644)
	}
	for _, name := range lexers {
		if err := copyFile(filepath.Join("lexers", "embedded", name+".xml"), name+".xml"); err != nil {
			return err
		}
	}
	return copyFile("COPYING", "COPYING")
}
