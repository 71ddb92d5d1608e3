// Package config reads tiny-go's settings files, the user's
// (~/.config/tiny-go/config.toml, under $XDG_CONFIG_HOME when set) and the
// project's (.tiny-agent/config.toml), and merges them with the
// environment and the command line: flags > environment > project > user >
// defaults. Every value keeps where it came from (Source), so a caller can
// say which setting chose the URL, and `tiny-go config` can print it.
//
// The package validates what the files hold (unknown keys, wrong types,
// values out of range: file, line and key in one line); flags and
// environment variables keep being validated where they are used.
package config

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
)

// Key names a setting; it is also its key in the TOML files.
type Key string

// The settings.
const (
	Model          Key = "model"
	Endpoint       Key = "endpoint"
	Provider       Key = "provider"
	APIKey         Key = "api_key"
	Approval       Key = "approval"
	Sandbox        Key = "sandbox"
	Writable       Key = "writable"
	Network        Key = "network"
	ContextWindow  Key = "context_window"
	CompactShare   Key = "compact_share"
	Reasoning      Key = "reasoning"
	IdleTimeout    Key = "idle_timeout"
	RequestTimeout Key = "request_timeout"
	// HookFailClosed makes a PreToolUse hook that fails (crashes, times
	// out, prints invalid JSON) block its call instead of letting it
	// through ("true" or "false").
	HookFailClosed Key = "hook_fail_closed"
	// Notify is how the terminal is told that tiny-go waits for an
	// approval or ended a long turn: off, bell, osc9 or osc777.
	Notify Key = "notify"
	// NotifyAfter is how long a turn runs before its end is notified.
	NotifyAfter Key = "notify_after"
	// Hooks is the [hooks] table: event -> [{matcher, hooks}], the shape
	// of Claude Code's settings.json (internal/hooks reads it).
	Hooks Key = "hooks"
	// NativeTools says when the Responses API offers OpenAI's native
	// apply_patch and shell tools: auto, on or off.
	NativeTools Key = "native_tools"
	// WebSearch says how web_search is offered: auto, native, searxng,
	// brave or off (docs/web.md).
	WebSearch Key = "web_search"
	// SearXNGURL is the base URL of the SearXNG web_search asks.
	SearXNGURL Key = "searxng_url"
	// MCPServers is the table of MCP servers ([mcp_servers.<alias>]), an
	// alternative to the catalog file of $TINY_MCP_CONFIG.
	MCPServers Key = "mcp_servers"
	// LSP is the table of language servers ([lsp], [lsp.<name>];
	// docs/lsp.md).
	LSP Key = "lsp"
	// WebFetchMaxBytes is the most of a page web_fetch reads (bytes);
	// WebFetchTimeout bounds one fetch, redirects included (docs/web.md).
	WebFetchMaxBytes Key = "web_fetch_max_bytes"
	WebFetchTimeout  Key = "web_fetch_timeout"
)

// Keys lists the scalar and list settings in the order they are shown.
var Keys = []Key{Model, Endpoint, Provider, APIKey, Approval, Sandbox, Writable, Network,
	ContextWindow, CompactShare, Reasoning, IdleTimeout, RequestTimeout, HookFailClosed, Notify, NotifyAfter, NativeTools,
	WebFetchMaxBytes, WebFetchTimeout, WebSearch, SearXNGURL}

// EnvVar is the environment variable of a setting, or "".
func EnvVar(k Key) string {
	switch k {
	case Model:
		return "TINY_MODEL"
	case Endpoint:
		return "TINY_ENDPOINT"
	case Provider:
		return "TINY_PROVIDER"
	case ContextWindow:
		return "TINY_CONTEXT_WINDOW"
	case CompactShare:
		return "TINY_COMPACT_SHARE"
	case Reasoning:
		return "TINY_REASONING"
	case IdleTimeout:
		return "TINY_IDLE_TIMEOUT"
	case RequestTimeout:
		return "TINY_REQUEST_TIMEOUT"
	case HookFailClosed:
		return "TINY_HOOK_FAIL_CLOSED"
	case Notify:
		return "TINY_NOTIFY"
	case NotifyAfter:
		return "TINY_NOTIFY_AFTER"
	case NativeTools:
		return "TINY_NATIVE_TOOLS"
	case WebSearch:
		return "TINY_WEB_SEARCH"
	case SearXNGURL:
		return "TINY_SEARXNG_URL"
	case MCPServers:
		return MCPConfigEnv
	case WebFetchMaxBytes:
		return "TINY_WEB_FETCH_MAX_BYTES"
	case WebFetchTimeout:
		return "TINY_WEB_FETCH_TIMEOUT"
	}
	return ""
}

// MCPConfigEnv names the variable of the JSON MCP catalog; when set it
// replaces the servers of the files.
const MCPConfigEnv = "TINY_MCP_CONFIG"

// KeyVars are the variables an API key is read from, by endpoint: an
// api_key in a file stands in for whichever of them is unset.
var KeyVars = []string{"OPENROUTER_API_KEY", "TINY_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"}

// Kind tells where a value came from.
type Kind string

// Source kinds, weakest first.
const (
	Default Kind = "default"
	User    Kind = "user"    // the user's file
	Project Kind = "project" // the project's file
	Env     Kind = "env"
	Flag    Kind = "flag"
)

// Source is where a setting's value came from.
type Source struct {
	Kind Kind `json:"kind"`
	// Name is the flag (--model) or the variable (TINY_MODEL).
	Name string `json:"name,omitzero"`
	// File and Line locate a value read from a settings file.
	File string `json:"file,omitzero"`
	Line int    `json:"line,omitzero"`
}

// String is the source for people: "flag --model", "env TINY_MODEL",
// "/home/me/.config/tiny-go/config.toml:3" or "default".
func (s Source) String() string {
	switch s.Kind {
	case Flag, Env:
		return string(s.Kind) + " " + s.Name
	case User, Project:
		return fmt.Sprintf("%s:%d", s.File, s.Line)
	}
	return string(Default)
}

// Setting is one resolved value.
type Setting struct {
	Key    Key      `json:"key"`
	Value  string   `json:"value,omitzero"`
	List   []string `json:"list,omitzero"` // writable
	Source Source   `json:"source"`
	// Secret values (api_key) are never printed: Value is "" and Set says
	// whether one is there.
	Secret bool `json:"secret,omitzero"`
	Set    bool `json:"set"`
}

// FlagValue is a setting flag the user gave.
type FlagValue struct {
	Key   Key
	Name  string // with the dashes: --model
	Value string
	List  []string
}

// Options are the inputs of Load.
type Options struct {
	// WorkDir is the absolute working directory; the project file is
	// searched from it upwards to the repository root.
	WorkDir string
	// Getenv reads the environment (HOME, XDG_CONFIG_HOME, TINY_*).
	Getenv func(string) string
	// Flags are the setting flags given on the command line.
	Flags []FlagValue
	// UserFile and ProjectFile override the files' locations (tests);
	// "-" reads no file.
	UserFile, ProjectFile string
}

// Settings are the merged settings.
type Settings struct {
	values  map[Key]Setting
	servers []Server
	hooks   []Table
	lsp     []Table
	// Files are the settings files looked at, in precedence order (user,
	// then project), whether or not they exist.
	Files  []FileInfo
	getenv func(string) string
}

// FileInfo is a settings file looked at.
type FileInfo struct {
	Scope  Kind   `json:"scope"`
	Path   string `json:"path"`
	Exists bool   `json:"exists"`
}

// Load reads the settings files and merges them with the environment and
// flags. A file that does not exist is skipped; one that cannot be read
// or does not validate is an error naming the file (and line).
func Load(o Options) (*Settings, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	s := &Settings{values: make(map[Key]Setting), getenv: getenv}
	userPath := o.UserFile
	if userPath == "" {
		userPath = UserFile(getenv)
	}
	projectPath := o.ProjectFile
	if projectPath == "" {
		projectPath = ProjectFile(o.WorkDir)
	}
	servers := map[string]Server{}
	for _, f := range []struct {
		scope Kind
		path  string
	}{{User, userPath}, {Project, projectPath}} {
		if f.path == "-" || f.path == "" {
			continue
		}
		file, exists, err := ReadFile(f.path, f.scope, getenv)
		if err != nil {
			return nil, err
		}
		s.Files = append(s.Files, FileInfo{Scope: f.scope, Path: f.path, Exists: exists})
		if !exists {
			continue
		}
		for _, v := range file.Values {
			s.values[v.Key] = v // the project's replaces the user's
		}
		if file.Hooks != nil {
			s.hooks = append(s.hooks, *file.Hooks)
		}
		for _, sv := range file.Servers {
			servers[sv.Alias] = sv
		}
		if file.LSP != nil {
			s.lsp = append(s.lsp, *file.LSP)
		}
	}
	for _, alias := range slices.Sorted(maps.Keys(servers)) {
		s.servers = append(s.servers, servers[alias])
	}
	for _, k := range Keys {
		if name := EnvVar(k); name != "" {
			if v := getenv(name); v != "" {
				s.values[k] = Setting{Key: k, Value: v, Set: true, Source: Source{Kind: Env, Name: name}}
			}
		}
	}
	if v, ok := s.values[APIKey]; ok {
		for _, name := range KeyVars {
			if getenv(name) != "" {
				v.Source = Source{Kind: Env, Name: name}
				s.values[APIKey] = v
				break
			}
		}
	}
	for _, fl := range o.Flags {
		s.values[fl.Key] = Setting{Key: fl.Key, Value: fl.Value, List: fl.List, Set: true, Source: Source{Kind: Flag, Name: fl.Name}}
	}
	return s, nil
}

// UserFile is the user's settings file: $XDG_CONFIG_HOME/tiny-go/config.toml,
// else ~/.config/tiny-go/config.toml; "" without either variable.
func UserFile(getenv func(string) string) string {
	dir := getenv("XDG_CONFIG_HOME")
	if dir == "" || !filepath.IsAbs(dir) { // the XDG spec ignores a relative one
		home := getenv("HOME")
		if home == "" {
			return ""
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "tiny-go", "config.toml")
}

// ProjectDir is the directory holding the settings, sessions and other
// project state: .tiny-agent under the project root.
const ProjectDir = ".tiny-agent"

// ProjectFile is the project's settings file: .tiny-agent/config.toml in
// workDir or the nearest parent that has one, not looking above the
// repository root (the first directory with .git). Without one it is the
// file in workDir, which does not exist.
func ProjectFile(workDir string) string {
	if workDir == "" {
		return ""
	}
	for dir := workDir; ; {
		p := filepath.Join(dir, ProjectDir, "config.toml")
		if exists(p) || exists(filepath.Join(dir, ".git")) {
			if exists(p) {
				return p
			}
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return filepath.Join(workDir, ProjectDir, "config.toml")
}

// Get is the value of k and whether any layer set it.
func (s *Settings) Get(k Key) (string, bool) {
	v, ok := s.values[k]
	return v.Value, ok
}

// List is the value of a list setting (writable).
func (s *Settings) List(k Key) []string {
	return slices.Clone(s.values[k].List)
}

// Source tells where the value of k came from; Kind is Default when no
// layer set it.
func (s *Settings) Source(k Key) Source {
	if v, ok := s.values[k]; ok {
		return v.Source
	}
	if k == MCPServers {
		if name := EnvVar(k); s.getenv(name) != "" {
			return Source{Kind: Env, Name: name}
		}
		if len(s.servers) > 0 {
			return s.servers[len(s.servers)-1].Source
		}
	}
	return Source{Kind: Default}
}

// FromFile is the value of k when a settings file decided it (no flag or
// variable overrides it), for the settings that only flags had before.
func (s *Settings) FromFile(k Key) (Setting, bool) {
	v, ok := s.values[k]
	if !ok || (v.Source.Kind != User && v.Source.Kind != Project) {
		return Setting{}, false
	}
	return v, true
}

// Servers are the MCP servers of the files (the project's replacing the
// user's of the same alias), sorted by alias. They are not used when
// HookTables returns the [hooks] tables of the files, the user's first.
func (s *Settings) HookTables() []Table { return slices.Clone(s.hooks) }

// $TINY_MCP_CONFIG is set.
func (s *Settings) Servers() []Server { return slices.Clone(s.servers) }

// LSP are the [lsp] tables of the files, the user's first: each one's
// servers replace those of the same name before it.
func (s *Settings) LSP() []Table {
	if s == nil {
		return nil
	}
	return slices.Clone(s.lsp)
}

// TokenEnvNames are the token variables of every server of the files
// (not only those in use), which hold secrets; nil for nil Settings.
func (s *Settings) TokenEnvNames() []string {
	if s == nil {
		return nil
	}
	var names []string
	for _, sv := range s.servers {
		if sv.TokenEnv != "" && !slices.Contains(names, sv.TokenEnv) {
			names = append(names, sv.TokenEnv)
		}
	}
	return names
}

// Getenv is base with the files' values standing in for unset variables:
// TINY_MODEL from model and so on, and the key variables from api_key, so
// code that reads the environment sees the configured value in the right
// precedence (a set variable always wins).
func (s *Settings) Getenv(base func(string) string) func(string) string {
	fromFile := map[string]string{}
	for _, k := range Keys {
		if name := EnvVar(k); name != "" {
			if v, ok := s.FromFile(k); ok {
				fromFile[name] = v.Value
			}
		}
	}
	if v, ok := s.FromFile(APIKey); ok {
		for _, name := range KeyVars {
			fromFile[name] = v.Value
		}
	}
	if len(fromFile) == 0 {
		return base
	}
	return func(name string) string {
		if v := base(name); v != "" {
			return v
		}
		return fromFile[name]
	}
}

// All is every setting in display order, with the defaults given (by key,
// for people) where no layer set one; secrets are blanked.
func (s *Settings) All(defaults map[Key]string) []Setting {
	out := make([]Setting, 0, len(Keys))
	for _, k := range Keys {
		v, ok := s.values[k]
		if !ok {
			v = Setting{Key: k, Value: defaults[k], Source: Source{Kind: Default}}
		}
		if k == APIKey {
			v.Secret, v.Value = true, ""
		}
		out = append(out, v)
	}
	return out
}

// describe quotes a file value for an error line.
func describe(path string, line int, key string, format string, args ...any) error {
	return fmt.Errorf("%s:%d: %s: %s", path, line, key, fmt.Sprintf(format, args...))
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
