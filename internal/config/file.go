package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// MaxFileBytes caps a settings file.
const MaxFileBytes = 256 << 10

// File is one parsed settings file.
type File struct {
	Path    string
	Values  []Setting
	Servers []Server
	// Hooks is the [hooks] table as JSON, in the shape of the hooks key of
	// Claude Code's settings.json; internal/hooks validates it.
	Hooks *Table
	// LSP is the [lsp] table (language servers) as JSON, validated by
	// the lsp package when a server is first needed; nil without one.
	LSP *Table
}

// Table is a table of a settings file handed as JSON to the package it
// configures.
type Table struct {
	Source Source
	JSON   []byte
}

// Server is one [mcp_servers.<alias>] table: its members are those of a
// server in the JSON catalog (url, tokenEnv, command, args, passEnv,
// allowedTools, callTimeoutMs), which the MCP package validates when the
// server is used.
type Server struct {
	Alias  string
	Source Source
	// JSON is the table as a catalog server object.
	JSON []byte
	// TokenEnv is the variable holding its token, if any: a secret to
	// keep from commands like the model's key.
	TokenEnv string
}

// document is the file's shape; pointers tell a missing key from a zero.
type document struct {
	Model          *string              `toml:"model"`
	Endpoint       *string              `toml:"endpoint"`
	Provider       *string              `toml:"provider"`
	APIKey         *string              `toml:"api_key"`
	Approval       *string              `toml:"approval"`
	Sandbox        *string              `toml:"sandbox"`
	Writable       *[]string            `toml:"writable"`
	Network        *string              `toml:"network"`
	ContextWindow  *int64               `toml:"context_window"`
	CompactShare   *float64             `toml:"compact_share"`
	Reasoning      *string              `toml:"reasoning"`
	IdleTimeout    *string              `toml:"idle_timeout"`
	RequestTimeout *string              `toml:"request_timeout"`
	NativeTools    *string              `toml:"native_tools"`
	WebSearch      *string              `toml:"web_search"`
	SearXNGURL     *string              `toml:"searxng_url"`
	MCPServers     map[string]serverDoc `toml:"mcp_servers"`
	HookFailClosed *bool                `toml:"hook_fail_closed"`
	Notify         *string              `toml:"notify"`
	NotifyAfter    *string              `toml:"notify_after"`
	Hooks          map[string]any       `toml:"hooks"`
	LSP            map[string]any       `toml:"lsp"`
	// web_fetch's limits (docs/web.md).
	WebFetchMaxBytes *int64  `toml:"web_fetch_max_bytes"`
	WebFetchTimeout  *string `toml:"web_fetch_timeout"`
}

type serverDoc struct {
	URL           *string   `toml:"url" json:"url,omitzero"`
	TokenEnv      *string   `toml:"tokenEnv" json:"tokenEnv,omitzero"`
	Command       *string   `toml:"command" json:"command,omitzero"`
	Args          *[]string `toml:"args" json:"args,omitzero"`
	PassEnv       *[]string `toml:"passEnv" json:"passEnv,omitzero"`
	AllowedTools  *[]string `toml:"allowedTools" json:"allowedTools,omitzero"`
	CallTimeoutMs *int64    `toml:"callTimeoutMs" json:"callTimeoutMs,omitzero"`
}

// ReadFile reads the settings file at path; exists is false (and err nil)
// when there is none.
func ReadFile(path string, scope Kind, getenv func(string) string) (file *File, exists bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("settings file %s: %w", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, true, fmt.Errorf("settings file %s: %w", path, err)
	}
	if fi.IsDir() {
		return nil, true, fmt.Errorf("settings file %s is a directory", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, true, fmt.Errorf("settings file %s: %w", path, err)
	}
	if len(data) > MaxFileBytes {
		return nil, true, fmt.Errorf("settings file %s is larger than %d KiB", path, MaxFileBytes>>10)
	}
	file, err = Parse(path, scope, data, fi.Mode().Perm(), getenv("HOME"))
	return file, true, err
}

// Parse validates the bytes of a settings file. perm is the file's
// permission bits (an api_key needs 0600 or stricter); home expands "~/"
// in writable paths. Errors are one line that starts with path:line.
func Parse(path string, scope Kind, data []byte, perm fs.FileMode, home string) (*File, error) {
	lines, err := keyLines(path, data)
	if err != nil {
		return nil, err
	}
	var doc document
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, decodeError(path, err)
	}
	p := &parser{path: path, scope: scope, lines: lines, f: &File{Path: path}}
	// Each phase checks its keys and stops at the first bad one.
	if err := p.texts(&doc, perm); err != nil {
		return nil, err
	}
	if err := p.numbers(&doc); err != nil {
		return nil, err
	}
	if err := p.writable(&doc, home); err != nil {
		return nil, err
	}
	if err := p.tables(&doc); err != nil {
		return nil, err
	}
	f := p.f
	sort.SliceStable(f.Values, func(i, j int) bool { return slices.Index(Keys, f.Values[i].Key) < slices.Index(Keys, f.Values[j].Key) })
	return f, nil
}

// parser gathers the settings of one file, each with where it was set.
type parser struct {
	path  string
	scope Kind
	lines lineIndex
	f     *File
}

// src says where key was set, for errors and `config` listings.
func (p *parser) src(key string) Source {
	return Source{Kind: p.scope, File: p.path, Line: p.lines.of(key)}
}

// str records a string setting when present, once check accepts it.
func (p *parser) str(k Key, v *string, check func(string) error) error {
	if v == nil {
		return nil
	}
	s := p.src(string(k))
	if check != nil {
		if err := check(*v); err != nil {
			return describe(p.path, s.Line, string(k), "%v", err)
		}
	}
	p.f.Values = append(p.f.Values, Setting{Key: k, Value: *v, Set: true, Source: s})
	return nil
}

// texts checks the string settings, in the order of the key list; a key
// needs a file only its owner can read (perm).
func (p *parser) texts(doc *document, perm fs.FileMode) error {
	path := p.path
	checks := []struct {
		k     Key
		v     *string
		check func(string) error
	}{
		{Model, doc.Model, nonEmpty},
		{Endpoint, doc.Endpoint, checkURL},
		{Provider, doc.Provider, oneOf("openrouter", "openai", "openai-responses", "anthropic")},
		{APIKey, doc.APIKey, func(v string) error {
			if perm&0o077 != 0 {
				return fmt.Errorf("a key is only read from a file no one else can read: run chmod 600 %s (the file is %04o), or keep the key in the environment", path, perm)
			}
			if v == "" || strings.ContainsFunc(v, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
				return errors.New("must be a key without spaces or control characters")
			}
			return nil
		}},
		{Approval, doc.Approval, oneOf("ask", "edits", "auto", "plan", "review")},
		{Sandbox, doc.Sandbox, oneOf("workspace", "read-only", "off")},
		{Network, doc.Network, oneOf("on", "off", "rules")},
		{Reasoning, doc.Reasoning, oneOf("off", "low", "medium", "high")},
		{IdleTimeout, doc.IdleTimeout, positiveDuration},
		{RequestTimeout, doc.RequestTimeout, positiveDuration},
		{Notify, doc.Notify, oneOf("off", "bell", "osc9", "osc777")},
		{NotifyAfter, doc.NotifyAfter, positiveDuration},
		{WebFetchTimeout, doc.WebFetchTimeout, positiveDuration},

		{NativeTools, doc.NativeTools, oneOf("auto", "on", "off")},
		{WebSearch, doc.WebSearch, oneOf("auto", "native", "searxng", "brave", "off")},
		{SearXNGURL, doc.SearXNGURL, checkURL},
	}
	for _, c := range checks {
		if err := p.str(c.k, c.v, c.check); err != nil {
			return err
		}
	}
	return nil
}

// numbers checks the numeric settings against their ranges (and takes
// the boolean); Parse sorts Values by key afterwards.
func (p *parser) numbers(doc *document) error {
	path, lines, f := p.path, p.lines, p.f
	if doc.ContextWindow != nil {
		if *doc.ContextWindow <= 0 {
			return describe(path, lines.of(string(ContextWindow)), string(ContextWindow), "must be a positive number of tokens")
		}
		f.Values = append(f.Values, Setting{Key: ContextWindow, Value: strconv.FormatInt(*doc.ContextWindow, 10), Set: true, Source: p.src(string(ContextWindow))})
	}
	if doc.WebFetchMaxBytes != nil {
		if *doc.WebFetchMaxBytes <= 0 {
			return describe(path, lines.of(string(WebFetchMaxBytes)), string(WebFetchMaxBytes), "must be a positive number of bytes")
		}
		f.Values = append(f.Values, Setting{Key: WebFetchMaxBytes, Value: strconv.FormatInt(*doc.WebFetchMaxBytes, 10), Set: true, Source: p.src(string(WebFetchMaxBytes))})
	}
	if doc.CompactShare != nil {
		if v := *doc.CompactShare; !(v > 0 && v <= 1) {
			return describe(path, lines.of(string(CompactShare)), string(CompactShare), "must be a number in (0, 1]")
		}
		f.Values = append(f.Values, Setting{Key: CompactShare, Value: strconv.FormatFloat(*doc.CompactShare, 'g', -1, 64), Set: true, Source: p.src(string(CompactShare))})
	}
	if doc.HookFailClosed != nil {
		f.Values = append(f.Values, Setting{Key: HookFailClosed, Value: strconv.FormatBool(*doc.HookFailClosed), Set: true, Source: p.src(string(HookFailClosed))})
	}
	return nil
}

// writable resolves the writable paths (home expands "~/") so the sandbox
// gets absolute ones.
func (p *parser) writable(doc *document, home string) error {
	if doc.Writable == nil {
		return nil
	}
	s := p.src(string(Writable))
	var list []string
	for _, wp := range *doc.Writable {
		abs, err := writablePath(wp, p.scope, p.path, home)
		if err != nil {
			return describe(p.path, s.Line, string(Writable), "%v", err)
		}
		list = append(list, abs)
	}
	p.f.Values = append(p.f.Values, Setting{Key: Writable, Value: strings.Join(list, ", "), List: list, Set: true, Source: s})
	return nil
}

// tables keeps hooks, MCP servers and language servers as JSON for the
// packages that read them.
func (p *parser) tables(doc *document) error {
	path, f := p.path, p.f
	if doc.Hooks != nil {
		data, err := json.Marshal(doc.Hooks)
		if err != nil {
			return fmt.Errorf("%s: hooks: %w", path, err)
		}
		f.Hooks = &Table{Source: p.src(string(Hooks)), JSON: data}
	}
	for _, alias := range slices.Sorted(maps.Keys(doc.MCPServers)) {
		data, err := json.Marshal(doc.MCPServers[alias])
		if err != nil {
			return fmt.Errorf("%s: mcp_servers.%s: %w", path, alias, err)
		}
		sv := Server{Alias: alias, Source: p.src(string(MCPServers) + "." + alias), JSON: data}
		if t := doc.MCPServers[alias].TokenEnv; t != nil {
			sv.TokenEnv = *t
		}
		f.Servers = append(f.Servers, sv)
	}
	if doc.LSP != nil {
		data, err := json.Marshal(doc.LSP)
		if err != nil {
			return fmt.Errorf("%s: lsp: %w", path, err)
		}
		f.LSP = &Table{Source: p.src(string(LSP)), JSON: data}
	}
	return nil
}

// writablePath makes a writable entry absolute: "~/" is the home
// directory; a relative path in the project's file is relative to the
// project (the directory holding .tiny-agent), and not allowed in the
// user's, which belongs to no directory.
func writablePath(p string, scope Kind, file, home string) (string, error) {
	switch {
	case p == "":
		return "", errors.New("an empty path")
	case strings.ContainsRune(p, 0):
		return "", errors.New("a path with a NUL byte")
	case p == "~" || strings.HasPrefix(p, "~/"):
		if home == "" {
			return "", fmt.Errorf("%q: HOME is not set", p)
		}
		return filepath.Join(home, p[1:]), nil
	case filepath.IsAbs(p):
		return filepath.Clean(p), nil
	case scope == Project:
		return filepath.Join(filepath.Dir(filepath.Dir(file)), p), nil
	}
	return "", fmt.Errorf("%q must be an absolute path or start with ~/", p)
}

func nonEmpty(v string) error {
	if strings.TrimSpace(v) == "" {
		return errors.New("must not be empty")
	}
	return nil
}

func checkURL(v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL", v)
	}
	return nil
}

func oneOf(allowed ...string) func(string) error {
	return func(v string) error {
		if slices.Contains(allowed, v) {
			return nil
		}
		return fmt.Errorf("must be %s, not %q", strings.Join(allowed[:len(allowed)-1], ", ")+" or "+allowed[len(allowed)-1], v)
	}
}

func positiveDuration(v string) error {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return fmt.Errorf("must be a positive duration such as \"90s\" or \"10m\", not %q", v)
	}
	return nil
}

// lineIndex maps dotted keys to the line they are written on.
type lineIndex map[string]int

// of is the line of key, or of its nearest written parent (a key inside
// an inline table), or 1.
func (l lineIndex) of(key string) int {
	for {
		if n, ok := l[key]; ok {
			return n
		}
		i := strings.LastIndexByte(key, '.')
		if i < 0 {
			return 1
		}
		key = key[:i]
	}
}

// keyLines parses the document with the library's parser to learn on
// which line each key is written (the decoder does not say); a syntax
// error is reported here, with its line.
func keyLines(path string, data []byte) (lineIndex, error) {
	starts := []int{0}
	for i, b := range data {
		if b == '\n' {
			starts = append(starts, i+1)
		}
	}
	lineAt := func(offset int) int {
		return sort.Search(len(starts), func(i int) bool { return starts[i] > offset })
	}
	lines := lineIndex{}
	var p unstable.Parser
	p.Reset(data)
	var table []string
	for p.NextExpression() {
		e := p.Expression()
		if e.Kind != unstable.KeyValue && e.Kind != unstable.Table && e.Kind != unstable.ArrayTable {
			continue
		}
		var parts []string
		line := 0
		for it := e.Key(); it.Next(); {
			k := it.Node()
			parts = append(parts, string(k.Data))
			if line == 0 {
				line = lineAt(int(k.Raw.Offset))
			}
		}
		if e.Kind != unstable.KeyValue {
			table = parts
		} else {
			parts = append(slices.Clone(table), parts...)
		}
		key := strings.Join(parts, ".")
		if _, seen := lines[key]; !seen {
			lines[key] = line
		}
	}
	if err := p.Error(); err != nil {
		var pe *unstable.ParserError
		line := 1
		msg := err.Error()
		if errors.As(err, &pe) {
			line = lineAt(int(p.Range(pe.Highlight).Offset))
			msg = pe.Message
		}
		return nil, fmt.Errorf("%s:%d: TOML syntax error: %s", path, line, oneLine(msg))
	}
	return lines, nil
}

// decodeError is the decoder's error as one line "path:line: key: what".
func decodeError(path string, err error) error {
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) && len(strict.Errors) > 0 {
		e := strict.Errors[0]
		row, _ := e.Position()
		return fmt.Errorf("%s:%d: %s: unknown key (see docs/configuration.md for the keys)", path, row, strings.Join(e.Key(), "."))
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, _ := de.Position()
		key := strings.Join(de.Key(), ".")
		if key == "" {
			return fmt.Errorf("%s:%d: %s", path, row, typeMessage(de.Error()))
		}
		return fmt.Errorf("%s:%d: %s: %s", path, row, key, typeMessage(de.Error()))
	}
	return fmt.Errorf("%s: %v", path, oneLine(err.Error()))
}

// typeMessage shortens the decoder's "cannot decode TOML string into
// struct field config.document.ContextWindow of type int64" to what the
// user wrote and what was wanted.
func typeMessage(msg string) string {
	msg = strings.TrimPrefix(oneLine(msg), "toml: ")
	if strings.HasPrefix(msg, "cannot decode TOML ") {
		have, rest, _ := strings.Cut(strings.TrimPrefix(msg, "cannot decode TOML "), " into ")
		want := rest
		if i := strings.LastIndex(rest, " of type "); i >= 0 {
			want = rest[i+len(" of type "):]
		}
		return fmt.Sprintf("wrong type: TOML %s where %s is wanted", have, goTypeName(want))
	}
	return msg
}

func goTypeName(t string) string {
	t = strings.TrimPrefix(t, "*")
	switch {
	case t == "string":
		return "a string"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case strings.HasPrefix(t, "[]"):
		return "an array of strings"
	case strings.HasPrefix(t, "map"), strings.Contains(t, "serverDoc"):
		return "a table"
	}
	return t
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.TrimSpace(s)
}
