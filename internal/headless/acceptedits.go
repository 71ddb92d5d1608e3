package headless

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/cctools"
)

// acceptEditsCommands are the file-system commands acceptEdits lets run
// without asking, as Claude Code's acceptEdits does.
var acceptEditsCommands = []string{"mkdir", "touch", "rm", "rmdir", "mv", "cp", "sed"}

// acceptsEdit reports whether acceptEdits allows a call in dir: a Write or
// Edit of a file inside dir, or a simple file-system command (one of
// acceptEditsCommands, no shell syntax) whose paths are all inside dir.
func acceptsEdit(c cctools.Call, dir string) bool {
	var in struct {
		FilePath string `json:"file_path"`
		Command  string `json:"command"`
		Bg       bool   `json:"run_in_background"`
	}
	if json.Unmarshal(c.Input, &in) != nil {
		return false
	}
	switch c.Name {
	case cctools.Write, cctools.Edit, cctools.MultiEdit:
		return inside(in.FilePath, dir)
	case cctools.Bash:
		return !in.Bg && simpleFileCommand(in.Command, dir)
	}
	return false
}

// shellSyntax is what makes a command more than one program with plain
// arguments: separators, redirections, substitutions, globs, quotes.
const shellSyntax = ";&|<>()$`\\\"'*?[]{}~!#\n\r"

func simpleFileCommand(cmd, dir string) bool {
	if strings.ContainsAny(cmd, shellSyntax) {
		return false
	}
	words := strings.Fields(cmd)
	if len(words) == 0 || !slices.Contains(acceptEditsCommands, words[0]) {
		return false
	}
	paths := 0
	for _, w := range words[1:] {
		if strings.HasPrefix(w, "-") {
			if words[0] == "sed" && w != "-i" && w != "-n" && w != "-E" && w != "-r" {
				return false // sed's -e, -f and friends take scripts and files
			}
			continue
		}
		if words[0] == "sed" && paths == 0 {
			paths++ // the script
			continue
		}
		if !inside(w, dir) {
			return false
		}
		paths++
	}
	return paths > 0
}

// inside reports whether path (relative to dir, or absolute) names dir or
// a file under it, lexically.
func inside(path, dir string) bool {
	if path == "" || dir == "" {
		return false
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}
