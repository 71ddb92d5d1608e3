package permissions

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxWalk bounds the walk that finds the files of a "**" pattern, so a
// huge tree does not slow every command; what lies beyond is not hidden
// from commands (the read tool still refuses it).
const maxWalk = 20000

// HiddenPaths are the existing files and directories that Read deny rules
// name, for the sandbox to hide from commands (a command could otherwise
// `cat` what the read tool refuses). A bare Read deny hides nothing: it
// would hide the whole file system.
func (s *Settings) HiddenPaths() []string {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		// Covering the working directory (or a directory holding it)
		// would leave commands nowhere to run: the read tool still
		// refuses what lies there.
		if rel, err := filepath.Rel(p, s.cwd); err == nil && (rel == "." || !strings.HasPrefix(rel, "..")) {
			return
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for i := range s.Rules {
		r := &s.Rules[i]
		if r.Kind != Deny || r.tool != "Read" || r.bare {
			continue
		}
		for _, p := range s.expand(s.pathPattern(r)) {
			add(p)
		}
	}
	return out
}

// expand lists the existing paths a pattern names.
func (s *Settings) expand(pattern string) []string {
	if !strings.ContainsAny(pattern, "*?[") {
		if _, err := os.Lstat(pattern); err == nil {
			return []string{pattern}
		}
		return nil
	}
	if dir, ok := strings.CutSuffix(pattern, "/**"); ok && !strings.ContainsAny(dir, "*?[") {
		return s.expand(dir)
	}
	if !strings.Contains(pattern, "**") {
		m, _ := filepath.Glob(pattern)
		return m
	}
	// Walk from the last directory before the first wildcard.
	base := pattern[:strings.IndexAny(pattern, "*?[")]
	base = base[:strings.LastIndexByte(base, '/')+1]
	if base == "" || base == "/" {
		return nil
	}
	var out []string
	n := 0
	_ = filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if n++; n > maxWalk {
			return fs.SkipAll
		}
		if err != nil {
			return filepath.SkipDir
		}
		if matchPath(pattern, p) && p != filepath.Clean(base) {
			out = append(out, p)
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == ".tiny-agent") {
			return filepath.SkipDir
		}
		return nil
	})
	return out
}
