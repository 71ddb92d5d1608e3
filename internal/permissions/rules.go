// Package permissions reads Claude Code's permission rules (the
// "permissions" key of ~/.claude/settings.json, .claude/settings.json and
// .claude/settings.local.json) and decides tool calls by them, with
// Claude Code's meaning: deny wins over ask, ask over allow; a bare tool
// name matches every call of the tool; Bash(...) matches commands (each
// command of a compound one), Read(...) and Edit(...) match paths with
// gitignore-style patterns.
package permissions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
)

// Kind is the list a rule is in.
type Kind string

// The lists, strongest first.
const (
	Deny  Kind = "deny"
	Ask   Kind = "ask"
	Allow Kind = "allow"
)

// Rule is one rule of one settings file.
type Rule struct {
	Kind Kind `json:"kind"`
	// Text is the rule as written: "Bash(npm run test:*)".
	Text string `json:"rule"`
	// Source is the settings file it came from.
	Source string `json:"source"`
	tool   string // "Bash", "Read", "mcp__server__tool"
	spec   string // what is in the parentheses
	bare   bool   // no parentheses: every call of the tool
	root   string // the directory a "/path" pattern is relative to
}

// Dir is an additional directory and the file that named it.
type Dir struct {
	Path   string `json:"path"`
	Source string `json:"source"`
}

// Settings are the rules in effect.
type Settings struct {
	Rules []Rule `json:"rules"`
	// DefaultMode is the strongest file's permissions.defaultMode ("" if
	// none), DefaultModeSource that file.
	DefaultMode       string `json:"defaultMode,omitzero"`
	DefaultModeSource string `json:"defaultModeSource,omitzero"`
	// AdditionalDirectories are every file's, absolute.
	AdditionalDirectories []Dir `json:"additionalDirectories,omitzero"`
	// Problems are rules or files that cannot be used, one line each.
	Problems []string `json:"problems,omitzero"`
	home     string
	cwd      string
	// mu guards Rules, to which a skill in use adds (AllowForSession).
	mu sync.RWMutex
}

// AllowForSession adds allow rules that hold until the process ends (a
// skill's allowed-tools while it is in use); source says where they came
// from. A rule that does not parse is left out.
func (s *Settings) AllowForSession(rules []string, source string) {
	s.addForProcess(Allow, rules, source)
}

// DenyForProcess adds deny rules that hold until the process ends and
// that no settings file can undo (deny wins): tiny-go's own, such as its
// state key's folder; source says why.
func (s *Settings) DenyForProcess(rules []string, source string) {
	s.addForProcess(Deny, rules, source)
}

// addForProcess adds rules of kind from source, each once; a rule that
// does not parse is left out.
func (s *Settings) addForProcess(kind Kind, rules []string, source string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, text := range rules {
		r, err := ParseRule(text)
		if err != nil || slices.ContainsFunc(s.Rules, func(o Rule) bool { return o.Kind == kind && o.Text == text && o.Source == source }) {
			continue
		}
		r.Kind, r.Source, r.root = kind, source, s.cwd
		s.Rules = append(s.Rules, r)
	}
}

// Files are Claude Code's settings files, weakest first: the user's, the
// project's, the project's local one.
func Files(home, projectDir string) []string {
	var files []string
	if home != "" {
		files = append(files, filepath.Join(home, ".claude", "settings.json"))
	}
	return append(files, filepath.Join(projectDir, ".claude", "settings.json"), LocalFile(projectDir))
}

// LocalFile is the project's local settings file, where "always allow"
// answers are kept.
func LocalFile(projectDir string) string {
	return filepath.Join(projectDir, ".claude", "settings.local.json")
}

type permissionsDoc struct {
	Allow                 []string `json:"allow"`
	Deny                  []string `json:"deny"`
	Ask                   []string `json:"ask"`
	DefaultMode           string   `json:"defaultMode"`
	AdditionalDirectories []string `json:"additionalDirectories"`
}

// Load reads the permissions of files (weakest first; a missing file has
// none) for a session in cwd. A file or rule that cannot be used is a
// problem line; the rest still count.
func Load(files []string, home, cwd string) *Settings {
	s := &Settings{home: home, cwd: cwd}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			s.Problems = append(s.Problems, fmt.Sprintf("%s: %v; its permission rules are not used", path, err))
			continue
		}
		var doc struct {
			Permissions *permissionsDoc `json:"permissions"`
		}
		if err := json.Unmarshal(data, &doc, json.RejectUnknownMembers(false)); err != nil {
			s.Problems = append(s.Problems, fmt.Sprintf("%s: permissions: %s; its permission rules are not used", path, oneLine(err.Error())))
			continue
		}
		if doc.Permissions != nil {
			s.add(path, doc.Permissions)
		}
	}
	return s
}

func (s *Settings) add(path string, p *permissionsDoc) {
	// A "/path" pattern is relative to the directory holding .claude.
	root := filepath.Dir(filepath.Dir(path))
	for _, l := range []struct {
		kind  Kind
		rules []string
	}{{Deny, p.Deny}, {Ask, p.Ask}, {Allow, p.Allow}} {
		for _, text := range l.rules {
			r, err := ParseRule(text)
			if err != nil {
				s.Problems = append(s.Problems, fmt.Sprintf("%s: permissions.%s: %q: %v", path, l.kind, text, err))
				continue
			}
			r.Kind, r.Source, r.root = l.kind, path, root
			s.Rules = append(s.Rules, r)
		}
	}
	if p.DefaultMode != "" {
		switch p.DefaultMode {
		case "default", "acceptEdits", "plan", "bypassPermissions", "dontAsk":
			s.DefaultMode, s.DefaultModeSource = p.DefaultMode, path
		default:
			s.Problems = append(s.Problems, fmt.Sprintf("%s: permissions.defaultMode: unknown mode %q (default, acceptEdits, plan, bypassPermissions, dontAsk)", path, p.DefaultMode))
		}
	}
	for _, d := range p.AdditionalDirectories {
		abs := s.absPath(d, root)
		if abs == "" {
			s.Problems = append(s.Problems, fmt.Sprintf("%s: permissions.additionalDirectories: %q is not a directory path", path, d))
			continue
		}
		s.AdditionalDirectories = append(s.AdditionalDirectories, Dir{Path: abs, Source: path})
	}
}

// absPath makes a directory of additionalDirectories absolute: ~/ is
// home, a relative path is relative to the directory holding .claude.
func (s *Settings) absPath(d, root string) string {
	switch {
	case d == "":
		return ""
	case d == "~":
		return s.home
	case strings.HasPrefix(d, "~/"):
		if s.home == "" {
			return ""
		}
		return filepath.Join(s.home, d[2:])
	case filepath.IsAbs(d):
		return filepath.Clean(d)
	}
	return filepath.Join(root, d)
}

// ParseRule parses "Tool" or "Tool(specifier)".
func ParseRule(text string) (Rule, error) {
	t := strings.TrimSpace(text)
	r := Rule{Text: text}
	open := strings.IndexByte(t, '(')
	if open < 0 {
		r.tool, r.bare = t, true
	} else {
		if !strings.HasSuffix(t, ")") {
			return Rule{}, errors.New("a rule is Tool or Tool(specifier)")
		}
		r.tool, r.spec = t[:open], strings.TrimSpace(t[open+1:len(t)-1])
		// Tool() and Tool(*) mean the tool itself, as in Claude Code.
		r.bare = r.spec == "" || r.spec == "*"
	}
	if r.tool == "" || strings.ContainsAny(r.tool, " \t()") {
		return Rule{}, errors.New("a rule is Tool or Tool(specifier)")
	}
	if !r.bare && strings.HasPrefix(r.tool, "mcp__") {
		return Rule{}, errors.New("an MCP rule takes no specifier: mcp__server, mcp__server__* or mcp__server__tool")
	}
	return r, nil
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.TrimSpace(s)
}
