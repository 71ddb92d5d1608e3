package prompt

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// MaxImportDepth bounds @path imports: a file imported by an imported
// file counts one deeper (Claude Code's limit).
const MaxImportDepth = 5

// Instructions are the instruction files of a session, in the order the
// system message gives them, and what could not be read.
type Instructions struct {
	Files []ProjectInstructions
	// Problems are files that were skipped (an import too large or not a
	// regular file), one line each.
	Problems []string
}

// ReadInstructions reads the instruction files of a session in cwd, as
// Claude Code and AGENTS.md tools find them: ~/.claude/CLAUDE.md, then
// CLAUDE.md, .claude/CLAUDE.md, AGENTS.md and CLAUDE.local.md of each
// directory from the repository root (the nearest directory with .git,
// else cwd) down to cwd, then the .claude/rules/**/*.md of those
// directories; after each file, the files it imports with @path. A file
// is read once, however it is reached. home may be "".
func ReadInstructions(cwd, home string) (*Instructions, error) {
	cwd, err := filepath.Abs(cwd)
	if err != nil {
		return nil, fmt.Errorf("instructions: %w", err)
	}
	r := &reader{seen: map[string]bool{}, home: home, out: &Instructions{}}
	if home != "" {
		if err := r.file(filepath.Join(home, ".claude", "CLAUDE.md"), 0); err != nil {
			return nil, err
		}
	}
	dirs := dirsFromRoot(cwd)
	for _, dir := range dirs {
		for _, name := range []string{"CLAUDE.md", filepath.Join(".claude", "CLAUDE.md"), "AGENTS.md", "CLAUDE.local.md"} {
			if err := r.file(filepath.Join(dir, name), 0); err != nil {
				return nil, err
			}
		}
	}
	for _, dir := range dirs {
		for _, rule := range ruleFiles(filepath.Join(dir, ".claude", "rules")) {
			if err := r.file(rule, 0); err != nil {
				return nil, err
			}
		}
	}
	return r.out, nil
}

// dirsFromRoot lists the directories from the repository root holding
// cwd down to cwd; only cwd outside a repository.
func dirsFromRoot(cwd string) []string {
	var up []string
	for dir := cwd; ; dir = filepath.Dir(dir) {
		up = append(up, dir)
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			slices.Reverse(up)
			return up
		}
		if filepath.Dir(dir) == dir {
			return []string{cwd}
		}
	}
}

// ruleFiles are the .md files under dir, sorted, subdirectories included.
func ruleFiles(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(d.Name(), ".md") {
			out = append(out, p)
		}
		return nil
	})
	return out
}

type reader struct {
	seen map[string]bool
	home string
	out  *Instructions
}

// file reads one instruction file (a missing one is skipped) and then
// its imports. A top-level file that cannot be read stops the start, as
// AGENTS.md always did; an import that cannot is a problem line.
func (r *reader) file(path string, depth int) error {
	real, err := filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		real = path
	}
	if r.seen[real] {
		return nil
	}
	r.seen[real] = true
	text, err := readBounded(path, MaxProjectInstructionsBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil && depth > 0:
		r.out.Problems = append(r.out.Problems, fmt.Sprintf("%s: not imported: %v", path, err))
		return nil
	case err != nil:
		return err
	}
	r.out.Files = append(r.out.Files, ProjectInstructions{Path: path, Content: text})
	if depth >= MaxImportDepth {
		return nil
	}
	for _, imp := range imports(text) {
		if err := r.file(r.resolve(imp, filepath.Dir(path)), depth+1); err != nil {
			return err
		}
	}
	return nil
}

// resolve makes an import absolute: ~/ is home, a relative path is
// relative to the importing file.
func (r *reader) resolve(p, dir string) string {
	switch {
	case strings.HasPrefix(p, "~/") && r.home != "":
		return filepath.Join(r.home, p[2:])
	case filepath.IsAbs(p):
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

// importRef is @path at the start of a line or after white space (so an
// e-mail address is not one).
var importRef = regexp.MustCompile(`(?:^|[\s(])@((?:~/|/|\./|\.\./)?[A-Za-z0-9_.\-][A-Za-z0-9_.\-/]*)`)

// imports are the @path references of a text outside code blocks and
// code spans.
func imports(text string) []string {
	var out []string
	fenced := false
	for line := range strings.Lines(text) {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range importRef.FindAllStringSubmatchIndex(withoutCodeSpans(line), -1) {
			p := strings.TrimRight(line[m[2]:m[3]], ".,;:")
			if p != "" && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}

// withoutCodeSpans blanks `code spans` of a line, keeping its length.
func withoutCodeSpans(line string) string {
	b := []byte(line)
	in := false
	for i, c := range b {
		if c == '`' {
			in = !in
		}
		if in || c == '`' {
			b[i] = ' '
		}
	}
	return string(b)
}
