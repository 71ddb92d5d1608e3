package prompt

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
)

// Bounds on skill files. A header must fit in the first MaxSkillHeaderBytes;
// /skill:<name> sends at most MaxSkillFileBytes of file text.
const (
	MaxSkillHeaderBytes = 64 << 10
	MaxSkillFileBytes   = 1 << 20
)

// SkillsDir is where project skills live, relative to the working directory.
const SkillsDir = ".tiny-agent/skills"

// ProjectSkillDirs are the directories, relative to the working
// directory, where skills are found, in order: tiny-go's own, Claude
// Code's, and the one Codex, opencode and others share. The user's
// ~/.claude/skills comes after them.
var ProjectSkillDirs = []string{SkillsDir, ".claude/skills", ".agents/skills"}

// Skill is one entry of the skill index. Its body is never part of the
// system message; Path is where the model (or /skill:) reads it.
type Skill struct {
	Name        string
	Description string
	Path        string // absolute path of the SKILL.md
	// AllowedTools are the header's allowed-tools, Claude Code's rules
	// ("Read", "Bash(git add:*)") that need no approval while the skill is
	// in use.
	AllowedTools []string
}

// DiscoverSkills returns the skills of the explicit --skill files followed
// by those found as SKILL.md anywhere under cwd/.tiny-agent/skills, each
// group sorted by path. When two skills share a name the first one wins, so
// an explicit --skill file overrides a project skill of the same name.
//
// Discovered files without a valid header are skipped, as are unreadable
// ones. An explicit file that cannot be read or has no valid header is an
// error, because the user asked for it by name. Relative explicit paths are
// resolved against the process working directory, like any other flag.
func DiscoverSkills(cwd string, explicit []string) ([]Skill, error) {
	skills, _, err := DiscoverSkillsFrom(cwd, "", explicit)
	return skills, err
}

// DiscoverSkillsFrom is DiscoverSkills that also looks in home's
// ~/.claude/skills (after the project's) and returns one line for each
// SKILL.md found but skipped.
func DiscoverSkillsFrom(cwd, home string, explicit []string) (skills []Skill, problems []string, err error) {
	var all []Skill
	named, err := explicitSkills(explicit)
	if err != nil {
		return nil, nil, err
	}
	all = append(all, named...)
	roots := make([]string, 0, len(ProjectSkillDirs)+1)
	for _, d := range ProjectSkillDirs {
		roots = append(roots, filepath.Join(cwd, d))
	}
	if home != "" {
		roots = append(roots, filepath.Join(home, ".claude", "skills"))
	}
	for _, root := range roots {
		found, skipped, err := projectSkills(root)
		if err != nil {
			return nil, nil, err
		}
		all = append(all, found...)
		problems = append(problems, skipped...)
	}

	seenName := make(map[string]bool, len(all))
	seenPath := make(map[string]bool, len(all))
	out := all[:0]
	for _, s := range all {
		if seenName[s.Name] || seenPath[s.Path] {
			continue
		}
		seenName[s.Name] = true
		seenPath[s.Path] = true
		out = append(out, s)
	}
	return out, problems, nil
}

func explicitSkills(paths []string) ([]Skill, error) {
	abs := make([]string, 0, len(paths))
	for _, p := range paths {
		a, err := filepath.Abs(p)
		if err != nil {
			return nil, fmt.Errorf("skill %s: %w", p, err)
		}
		abs = append(abs, a)
	}
	slices.Sort(abs)
	abs = slices.Compact(abs)
	skills := make([]Skill, 0, len(abs))
	for _, p := range abs {
		s, err := loadSkill(p)
		if err != nil {
			return nil, fmt.Errorf("skill %s: %w", p, err)
		}
		skills = append(skills, s)
	}
	return skills, nil
}

// projectSkills walks one skills directory. Symlinked directories are not
// followed (WalkDir never does), so the walk is bounded by the real tree.
func projectSkills(dir string) ([]Skill, []string, error) {
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("skills: %w", err)
	}
	var paths []string
	walkErr := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == root && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			// An unreadable subdirectory only hides its own skills.
			if d != nil && d.IsDir() && path != root {
				return fs.SkipDir
			}
			return nil
		}
		if !d.IsDir() && d.Name() == "SKILL.md" {
			paths = append(paths, path)
		}
		return nil
	})
	if walkErr != nil {
		return nil, nil, fmt.Errorf("skills: %w", walkErr)
	}
	slices.Sort(paths)
	var skills []Skill
	var skipped []string
	for _, p := range paths {
		s, err := loadSkill(p)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("skill %s: %v; it is not offered", p, err))
			continue
		}
		skills = append(skills, s)
	}
	return skills, skipped, nil
}

// errNoHeader means a file lacks the name/description header.
var errNoHeader = errors.New(`no "---" header with a description`)

func loadSkill(path string) (Skill, error) {
	head, err := readHead(path, MaxSkillHeaderBytes)
	if err != nil {
		return Skill{}, err
	}
	m, ok := parseSkillMeta(head, filepath.Base(filepath.Dir(path)))
	if !ok {
		return Skill{}, errNoHeader
	}
	return Skill{Name: m.name, Description: m.description, Path: path, AllowedTools: m.allowedTools}, nil
}

// readHead reads at most n bytes from the start of the regular file path.
func readHead(path string, n int64) (string, error) {
	data, err := readRegular(path, n)
	if err != nil {
		return "", err
	}
	return strings.ToValidUTF8(data, "\uFFFD"), nil
}
