// Package hooks runs the user's hooks with Claude Code's contract: the
// hooks key of .claude/settings.json, .claude/settings.local.json and
// ~/.claude/settings.json (and the [hooks] table of tiny-go's config.toml,
// in the same shape), matched on Claude Code's tool names and tiny-go's,
// run as commands with JSON on stdin, their exit code and stdout read the
// way Claude Code reads them. A hook is an effect: what a PreToolUse hook
// decided and a PostToolUse hook's intent are kept beside the session
// before they matter, so a resume never asks again nor runs a hook twice.
package hooks

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Event is a hook event, by Claude Code's name.
type Event string

// The events.
const (
	SessionStart       Event = "SessionStart"
	UserPromptSubmit   Event = "UserPromptSubmit"
	PreToolUse         Event = "PreToolUse"
	PermissionRequest  Event = "PermissionRequest"
	PostToolUse        Event = "PostToolUse"
	PostToolUseFailure Event = "PostToolUseFailure"
	Notification       Event = "Notification"
	Stop               Event = "Stop"
	SubagentStop       Event = "SubagentStop"
	PreCompact         Event = "PreCompact"
	PostCompact        Event = "PostCompact"
	SessionEnd         Event = "SessionEnd"
)

// Events lists the events in the order they are shown.
var Events = []Event{SessionStart, UserPromptSubmit, PreToolUse, PermissionRequest, PostToolUse,
	PostToolUseFailure, Notification, Stop, SubagentStop, PreCompact, PostCompact, SessionEnd}

// DefaultTimeout bounds a hook without a timeout of its own.
const DefaultTimeout = 60 * time.Second

// Hook is one command hook, with where it was configured.
type Hook struct {
	Event   Event         `json:"event"`
	Matcher string        `json:"matcher,omitzero"`
	Command string        `json:"command"`
	Timeout time.Duration `json:"-"` // in seconds in JSON (MarshalJSON)
	// Source is the file (and for TOML the line) it came from.
	Source string `json:"source"`
	match  func(string) bool
	// call, when set, runs the hook instead of Command (NewCallbackHook).
	call Callback
}

// MarshalJSON writes the hook with its timeout in seconds, as settings
// files give it (the JSON library has no seconds format for durations).
func (h Hook) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Event   Event   `json:"event"`
		Matcher string  `json:"matcher,omitzero"`
		Command string  `json:"command"`
		Timeout float64 `json:"timeout"`
		Source  string  `json:"source"`
	}{h.Event, h.Matcher, h.Command, h.Timeout.Seconds(), h.Source})
}

// Config is every hook in effect.
type Config struct {
	Hooks []Hook
	// Problems are hooks that cannot be used (an unknown event, a bad
	// matcher, a type other than command), one line each; the others
	// still run.
	Problems []string
}

// On is the hooks of ev.
func (c *Config) On(ev Event) []Hook {
	var out []Hook
	for _, h := range c.Hooks {
		if h.Event == ev {
			out = append(out, h)
		}
	}
	return out
}

// Table is a hooks value (event -> matcher groups) with its origin.
type Table struct {
	Source string
	JSON   []byte
}

// SettingsFiles are Claude Code's settings files that hold hooks, in
// Claude Code's order: the user's, the project's, the project's local.
func SettingsFiles(home, projectDir string) []string {
	var files []string
	if home != "" {
		files = append(files, filepath.Join(home, ".claude", "settings.json"))
	}
	return append(files, filepath.Join(projectDir, ".claude", "settings.json"),
		filepath.Join(projectDir, ".claude", "settings.local.json"))
}

// ProjectDir is the project a working directory belongs to, for
// .claude/settings.json and CLAUDE_PROJECT_DIR: the nearest directory
// from cwd up that has .claude/settings*.json, not above the repository
// root (the first directory with .git) nor at home; else cwd.
func ProjectDir(cwd, home string) string {
	for dir := cwd; ; {
		if dir != home && (exists(filepath.Join(dir, ".claude", "settings.json")) || exists(filepath.Join(dir, ".claude", "settings.local.json"))) {
			return dir
		}
		parent := filepath.Dir(dir)
		if exists(filepath.Join(dir, ".git")) || parent == dir || parent == home {
			return cwd
		}
		dir = parent
	}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// Load reads the hooks of Claude Code's settings files (a missing file
// has none) and of the given tables (config.toml). A file that cannot be
// read or parsed is one problem line; the others still count.
func Load(files []string, tables []Table) *Config {
	c := &Config{}
	seen := map[string]bool{}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			c.Problems = append(c.Problems, fmt.Sprintf("%s: %v; its hooks are not used", path, err))
			continue
		}
		var doc struct {
			Hooks jsontext.Value `json:"hooks"`
		}
		if err := json.Unmarshal(data, &doc, json.RejectUnknownMembers(false)); err != nil {
			c.Problems = append(c.Problems, fmt.Sprintf("%s: not valid JSON (%v); its hooks are not used", path, oneLine(err.Error())))
			continue
		}
		if len(doc.Hooks) > 0 {
			c.add(Table{Source: path, JSON: doc.Hooks}, seen)
		}
	}
	for _, t := range tables {
		c.add(t, seen)
	}
	return c
}

type groupDoc struct {
	Matcher string       `json:"matcher"`
	Hooks   []handlerDoc `json:"hooks"`
}

type handlerDoc struct {
	Type    string  `json:"type"`
	Command string  `json:"command"`
	Timeout float64 `json:"timeout"`
}

// add adds the hooks of one table; a hook already configured (same event,
// matcher and command) runs once, as in Claude Code.
func (c *Config) add(t Table, seen map[string]bool) {
	var doc map[string][]groupDoc
	if err := json.Unmarshal(t.JSON, &doc, json.RejectUnknownMembers(false)); err != nil {
		c.Problems = append(c.Problems, fmt.Sprintf("%s: hooks: %s; these hooks are not used", t.Source, oneLine(err.Error())))
		return
	}
	for _, ev := range sortedKeys(doc) {
		if !known(Event(ev)) {
			c.Problems = append(c.Problems, fmt.Sprintf("%s: hooks: unknown event %q (known: %s)", t.Source, ev, eventList()))
			continue
		}
		for _, g := range doc[ev] {
			match, err := compileMatcher(g.Matcher)
			if err != nil {
				c.Problems = append(c.Problems, fmt.Sprintf("%s: hooks.%s: matcher %q: %v", t.Source, ev, g.Matcher, err))
				continue
			}
			for _, h := range g.Hooks {
				switch {
				case h.Type != "command":
					c.Problems = append(c.Problems, fmt.Sprintf("%s: hooks.%s: a hook of type %q is not run (tiny-go runs \"command\" hooks only)", t.Source, ev, h.Type))
					continue
				case strings.TrimSpace(h.Command) == "":
					c.Problems = append(c.Problems, fmt.Sprintf("%s: hooks.%s: a command hook without a command is not run", t.Source, ev))
					continue
				}
				key := ev + "\x00" + g.Matcher + "\x00" + h.Command
				if seen[key] {
					continue
				}
				seen[key] = true
				timeout := DefaultTimeout
				if h.Timeout > 0 {
					timeout = time.Duration(h.Timeout * float64(time.Second))
				}
				c.Hooks = append(c.Hooks, Hook{Event: Event(ev), Matcher: g.Matcher, Command: h.Command, Timeout: timeout, Source: t.Source, match: match})
			}
		}
	}
}

// simpleMatcher is a matcher of plain names, "Edit|Write": exact names,
// as Claude Code treats it; anything else is a regular expression.
var simpleMatcher = regexp.MustCompile(`^[A-Za-z0-9_|]+$`)

// compileMatcher returns whether a name matches: "" and "*" match all.
func compileMatcher(m string) (func(string) bool, error) {
	switch {
	case m == "" || m == "*":
		return func(string) bool { return true }, nil
	case simpleMatcher.MatchString(m):
		names := strings.Split(m, "|")
		return func(s string) bool {
			for _, n := range names {
				if n == s {
					return true
				}
			}
			return false
		}, nil
	}
	re, err := regexp.Compile(m)
	if err != nil {
		return nil, err
	}
	return re.MatchString, nil
}

// Matches reports whether any of names matches the hook's matcher.
func (h Hook) Matches(names ...string) bool {
	if h.match == nil {
		return true
	}
	for _, n := range names {
		if h.match(n) {
			return true
		}
	}
	return len(names) == 0 && (h.Matcher == "" || h.Matcher == "*")
}

func known(ev Event) bool {
	for _, e := range Events {
		if e == ev {
			return true
		}
	}
	return false
}

func eventList() string {
	s := make([]string, len(Events))
	for i, e := range Events {
		s[i] = string(e)
	}
	return strings.Join(s, ", ")
}

func sortedKeys(m map[string][]groupDoc) []string {
	keys := make([]string, 0, len(m))
	for _, e := range Events {
		if _, ok := m[string(e)]; ok {
			keys = append(keys, string(e))
		}
	}
	for k := range m {
		if !known(Event(k)) {
			keys = append(keys, k)
		}
	}
	return keys
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.TrimSpace(s)
}
