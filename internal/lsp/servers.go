package lsp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Server is one language server: how to start it and which files it
// checks.
type Server struct {
	// Name is its key in the settings ("go", "python", a name of the
	// user's).
	Name string
	// Command is the program and its arguments.
	Command []string
	Env     []string
	// Languages maps a file extension (".go") to its language id ("go").
	Languages map[string]string
	// RootMarkers are the files whose nearest directory is the
	// workspace root of a file (go.mod, package.json, ...).
	RootMarkers []string
	// InitializationOptions go with initialize as they are.
	InitializationOptions json.RawMessage

	// projectTS: the built-in TypeScript server, which a project on
	// TypeScript 7 swaps for its own tsc (typescript.go); absent: none of
	// its programs is on PATH, so only such a project has one.
	projectTS, absent bool
}

// Program is the name of the server's program, for messages.
func (s Server) Program() string {
	if len(s.Command) == 0 {
		return s.Name
	}
	return filepath.Base(s.Command[0])
}

// candidate is a built-in server: the first of its commands found on
// PATH is used.
type candidate struct {
	name      string
	commands  [][]string
	languages map[string]string
	markers   []string
}

// builtins are the servers tiny-go looks for on PATH.
var builtins = []candidate{
	{"go", [][]string{{"gopls"}}, map[string]string{".go": "go"}, []string{"go.work", "go.mod"}},
	{"python", [][]string{{"pyright-langserver", "--stdio"}, {"basedpyright-langserver", "--stdio"}},
		map[string]string{".py": "python", ".pyi": "python"},
		[]string{"pyrightconfig.json", "pyproject.toml", "setup.py", "setup.cfg", "requirements.txt"}},
	{"typescript", [][]string{{"typescript-language-server", "--stdio"}},
		map[string]string{".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "typescriptreact",
			".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascriptreact"},
		[]string{"tsconfig.json", "jsconfig.json", "package.json"}},
	{"rust", [][]string{{"rust-analyzer"}}, map[string]string{".rs": "rust"}, []string{"Cargo.toml"}},
	{"c", [][]string{{"clangd"}},
		map[string]string{".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp"},
		[]string{"compile_commands.json", "compile_flags.txt", ".clangd", "CMakeLists.txt", "Makefile"}},
}

// Settings are the language-server settings: config.toml's [lsp] table
// (and its [lsp.<name>] tables) and a project's .lsp.json.
type Settings struct {
	Off bool
	// Wait bounds the wait for diagnostics after a change; StartWait
	// when the server had to start for it.
	Wait, StartWait time.Duration
	entries         map[string]entry
}

// The default bounds (docs/lsp.md).
const (
	DefaultWait      = time.Second
	DefaultStartWait = 3 * time.Second
)

// entry is one configured server: Claude Code's .lsp.json members
// (command, args, extensionToLanguage) and tiny-go's (off, env,
// rootMarkers, initializationOptions). A command may be a string or a
// list (config.toml's `command = ["gopls"]`).
type entry struct {
	Command               json.RawMessage   `json:"command"`
	Args                  []string          `json:"args"`
	ExtensionToLanguage   map[string]string `json:"extensionToLanguage"`
	Env                   map[string]string `json:"env"`
	RootMarkers           []string          `json:"rootMarkers"`
	InitializationOptions json.RawMessage   `json:"initializationOptions"`
	Off                   bool              `json:"off"`
	// Transport is accepted from .lsp.json; only stdio is spoken.
	Transport string `json:"transport"`
}

// DefaultSettings are the settings with nothing configured.
func DefaultSettings() Settings {
	return Settings{Wait: DefaultWait, StartWait: DefaultStartWait, entries: map[string]entry{}}
}

// ApplyTable merges one [lsp] table (as JSON: its scalars off, wait and
// start_wait, and a table per server) over s; later tables replace the
// servers of earlier ones.
func (s *Settings) ApplyTable(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("lsp: %w", err)
	}
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		v := raw[k]
		var err error
		switch k {
		case "off":
			err = json.Unmarshal(v, &s.Off)
		case "wait":
			s.Wait, err = duration(v)
		case "start_wait":
			s.StartWait, err = duration(v)
		default:
			var e entry
			if e, err = parseEntry(v); err == nil {
				s.entries[k] = e
			}
		}
		if err != nil {
			return fmt.Errorf("lsp.%s: %w", k, err)
		}
	}
	return nil
}

// ApplyLSPJSON merges a Claude Code .lsp.json (an object of servers by
// name) over s.
func (s *Settings) ApplyLSPJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		e, err := parseEntry(raw[k])
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		s.entries[k] = e
	}
	return nil
}

func parseEntry(data []byte) (entry, error) {
	var e entry
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return e, err
	}
	if e.Transport != "" && e.Transport != "stdio" {
		return e, fmt.Errorf("transport %q: only stdio is supported", e.Transport)
	}
	for ext := range e.ExtensionToLanguage {
		if !strings.HasPrefix(ext, ".") || len(ext) < 2 {
			return e, fmt.Errorf("extensionToLanguage: %q is not an extension like \".go\"", ext)
		}
	}
	if _, err := e.command(); err != nil {
		return e, err
	}
	return e, nil
}

// command is the entry's command line, nil when it names none.
func (e entry) command() ([]string, error) {
	if len(e.Command) == 0 || string(e.Command) == "null" {
		if len(e.Args) > 0 {
			return nil, errors.New("args without a command")
		}
		return nil, nil
	}
	var one string
	if json.Unmarshal(e.Command, &one) == nil {
		if strings.TrimSpace(one) == "" {
			return nil, errors.New("an empty command")
		}
		return append([]string{one}, e.Args...), nil
	}
	var list []string
	if err := json.Unmarshal(e.Command, &list); err != nil || len(list) == 0 || strings.TrimSpace(list[0]) == "" {
		return nil, errors.New("command must be a program name or a non-empty list")
	}
	return append(list, e.Args...), nil
}

func duration(v json.RawMessage) (time.Duration, error) {
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return 0, errors.New(`must be a duration like "2s"`)
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, errors.New(`must be a positive duration like "2s"`)
	}
	return d, nil
}

// Servers are the servers in effect: the built-ins found on PATH with
// what the settings change of them, and the settings' own servers.
// Servers switched off, or whose command is not on PATH, are left out.
func (s Settings) Servers(lookPath func(string) (string, error)) []Server {
	var out []Server
	for _, sv := range s.servers(lookPath) {
		if !sv.absent {
			out = append(out, sv)
		}
	}
	return out
}

// servers are Servers and, when no TypeScript server is on PATH, the
// built-in one a TypeScript 7 project gets its own tsc for.
func (s Settings) servers(lookPath func(string) (string, error)) []Server {
	if s.Off {
		return nil
	}
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	var out []Server
	seen := map[string]bool{}
	for _, b := range builtins {
		seen[b.name] = true
		e, configured := s.entries[b.name]
		if configured && e.Off {
			continue
		}
		sv := Server{Name: b.name, Languages: b.languages, RootMarkers: b.markers}
		if cmd, _ := e.command(); cmd != nil {
			sv.Command = cmd
		} else {
			for _, c := range b.commands {
				if _, err := lookPath(c[0]); err == nil {
					sv.Command = c
					break
				}
			}
		}
		if b.name == "typescript" && sv.Command == nil {
			sv.projectTS, sv.absent = true, true
			sv.Command = b.commands[0]
			if tsc := pathTypeScript(lookPath); tsc != "" {
				sv.Command, sv.absent = append([]string{tsc}, tsLSPArgs...), false
			}
		} else if b.name == "typescript" && !configured {
			sv.projectTS = true
		}
		if sv.Command == nil {
			continue
		}
		out = append(out, e.over(sv))
	}
	for _, name := range slices.Sorted(maps.Keys(s.entries)) {
		e := s.entries[name]
		cmd, _ := e.command()
		if seen[name] || e.Off || cmd == nil || len(e.ExtensionToLanguage) == 0 {
			continue
		}
		out = append(out, e.over(Server{Name: name, Command: cmd}))
	}
	return out
}

// over is sv with what the entry sets.
func (e entry) over(sv Server) Server {
	if len(e.ExtensionToLanguage) > 0 {
		sv.Languages = e.ExtensionToLanguage
	}
	for _, k := range slices.Sorted(maps.Keys(e.Env)) {
		sv.Env = append(sv.Env, k+"="+e.Env[k])
	}
	if len(e.RootMarkers) > 0 {
		sv.RootMarkers = e.RootMarkers
	}
	if len(e.InitializationOptions) > 0 {
		sv.InitializationOptions = e.InitializationOptions
	}
	return sv
}

// serverFor is the server of a file by its extension.
func serverFor(servers []Server, path string) (Server, string, bool) {
	ext := strings.ToLower(filepath.Ext(path))
	for _, sv := range servers {
		if lang, ok := sv.Languages[ext]; ok {
			return sv, lang, true
		}
	}
	return Server{}, "", false
}

// rootOf is the workspace root of a file: the nearest directory between
// the file and the working directory that holds one of the server's
// markers, else the working directory. ok is false for a file outside the
// working directory: no server is started for it.
func rootOf(workDir, path string, markers []string) (string, bool) {
	rel, err := filepath.Rel(workDir, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		for _, m := range markers {
			if _, err := os.Stat(filepath.Join(dir, m)); err == nil {
				return dir, true
			}
		}
		if dir == workDir || len(dir) <= len(workDir) {
			return workDir, true
		}
	}
}

func fileURI(path string) string {
	return (&url.URL{Scheme: "file", Path: path}).String()
}

// uriPath is the path of a file URI; ok is false for another scheme.
// Documents are keyed by path: servers escape URIs in their own ways.
func uriPath(uri string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return "", false
	}
	return filepath.Clean(u.Path), true
}

func baseName(p string) string { return filepath.Base(p) }
