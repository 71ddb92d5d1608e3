// Package mcp offers the tools of MCP servers (mcp.md) as tools.Tool values:
// a strict catalog, a Streamable HTTP client built on the official Go SDK,
// validation of what servers list, and formatting of call results.
//
// MCP is one more tool adapter, not an authorization boundary: it changes
// nothing about tool-call semantics, and its tools are never replayed.
package mcp

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ConfigEnv names the environment variable holding the catalog path. There
// is no default location and no fallback.
const ConfigEnv = "TINY_MCP_CONFIG"

// ErrConfigNotSet is returned when --mcp is used without ConfigEnv.
var ErrConfigNotSet = errors.New("TINY_MCP_CONFIG must be set to use --mcp")

// Catalog limits and defaults.
const (
	MaxCatalogBytes    = 1 << 20
	DefaultCallTimeout = 30 * time.Second
	MaxCallTimeout     = 24 * time.Hour
)

// Catalog is a parsed, validated catalog file.
type Catalog struct {
	Path    string
	Servers []Server // sorted by alias
}

// Transports of a catalog server.
const (
	TransportHTTP  = "http"  // Streamable HTTP at a URL
	TransportStdio = "stdio" // a local program spoken to over stdin/stdout
	TransportSSE   = "sse"   // the older HTTP+SSE transport
	TransportSDK   = "sdk"   // the embedding program's own server (Server.Conn)
)

// Server is one validated catalog entry. Its token was read from the
// environment when the catalog was loaded.
type Server struct {
	Alias string
	// Endpoint is the canonical URL: lower-case scheme and host, default
	// port dropped. Empty for a stdio server.
	Endpoint string
	// Command, Args and PassEnv describe a stdio server: the program (an
	// absolute path or a name looked up on PATH), its arguments, and the
	// names of the variables it gets besides the minimal environment.
	Command string
	Args    []string
	PassEnv []string
	// TokenEnv names the variable holding the bearer token; empty when the
	// server takes no token.
	TokenEnv string
	// AllowedTools, when not nil, are the only tools offered (each must
	// exist); nil offers every tool the server lists.
	AllowedTools []string
	// DisallowedTools are never offered.
	DisallowedTools []string
	CallTimeout     time.Duration
	// SSE selects the older HTTP+SSE transport ("type": "sse").
	SSE bool
	// Env are literal variables of a stdio server (.mcp.json's "env"),
	// already expanded.
	Env map[string]string
	// Headers are sent with every request to a remote server (.mcp.json's
	// "headers"), already expanded; their values are treated as secrets.
	Headers map[string]string
	// SecretVars are the variables its headers and oauth settings name:
	// like TokenEnv, kept from the commands' environment.
	SecretVars []string
	// OAuth configures sign-in; nil signs in with the defaults when the
	// server asks for it.
	OAuth *OAuthConfig
	// Source is the file the server was read from, for `mcp list`.
	Source string
	// Conn, when set, reaches a server the embedding program runs in its
	// own process (the Agent SDK's in-process servers, over the control
	// protocol): no program is started and no URL dialled.
	Conn sdk.Transport
	// token returns the secret. It is a func because fmt prints a func as
	// an address whatever the verb and however deeply it is nested, so a
	// Server printed by mistake never shows the token.
	token func() string
}

// Format prints the public fields only.
func (s Server) Format(f fmt.State, _ rune) {
	if s.Command != "" {
		fmt.Fprintf(f, "{Alias:%s Command:%s Args:%q PassEnv:%q AllowedTools:%q CallTimeout:%s}",
			s.Alias, s.Command, s.Args, s.PassEnv, s.AllowedTools, s.CallTimeout)
		return
	}
	fmt.Fprintf(f, "{Alias:%s Endpoint:%s TokenEnv:%s AllowedTools:%q CallTimeout:%s}",
		s.Alias, s.Endpoint, s.TokenEnv, s.AllowedTools, s.CallTimeout)
}

// Transport is TransportStdio, TransportHTTP or TransportSSE.
func (s Server) Transport() string {
	switch {
	case s.Conn != nil:
		return TransportSDK
	case s.Command != "":
		return TransportStdio
	case s.SSE:
		return TransportSSE
	}
	return TransportHTTP
}

// Target is what the server is reached at, for people: the URL, or the
// command line of a stdio server.
func (s Server) Target() string {
	if s.Command == "" {
		return s.Endpoint
	}
	parts := make([]string, 0, 1+len(s.Args))
	for _, a := range append([]string{s.Command}, s.Args...) {
		if a == "" || strings.ContainsFunc(a, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune(`"'\$`+"`", r) }) {
			a = strconv.Quote(a)
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// bearer returns the token, or "" when the server takes none.
func (s Server) bearer() string {
	if s.token == nil {
		return ""
	}
	return s.token()
}

// AuthHeader is the header that carries the token, or "" without a token.
func (s Server) AuthHeader() string {
	names := sortedKeys(s.Headers)
	if s.token != nil {
		names = append([]string{"Authorization"}, names...)
	}
	return strings.Join(names, ",")
}

// The catalog's wire shape. Pointers tell a missing member from a zero one.
type catalogFile struct {
	Servers map[string]serverFile `json:"servers"`
}

type serverFile struct {
	Type            *string           `json:"type"`
	Env             map[string]string `json:"env"`
	Headers         map[string]string `json:"headers"`
	DisallowedTools *[]string         `json:"disallowedTools"`
	OAuth           *OAuthConfig      `json:"oauth"`
	URL             *string           `json:"url"`
	TokenEnv        *string           `json:"tokenEnv"`
	Command         *string           `json:"command"`
	Args            *[]string         `json:"args"`
	PassEnv         *[]string         `json:"passEnv"`
	AllowedTools    *[]string         `json:"allowedTools"`
	CallTimeoutMs   *int64            `json:"callTimeoutMs"`
}

var envNamePattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// decodeCatalog reads either shape: tiny-go's strict {"servers": ...}, or
// {"mcpServers": ...} as Claude Code, Cursor and VS Code write it, whose
// members other tools add (and other top-level members) are ignored.
func decodeCatalog(data []byte) (catalogFile, error) {
	var shared struct {
		MCPServers jsontext.Value `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &shared); err != nil {
		return catalogFile{}, describeJSONError(err)
	}
	var file catalogFile
	if shared.MCPServers != nil {
		if err := json.Unmarshal(shared.MCPServers, &file.Servers); err != nil {
			return catalogFile{}, describeJSONError(err)
		}
		if file.Servers == nil {
			return catalogFile{}, errors.New(`"mcpServers" must be an object`)
		}
		return file, nil
	}
	if err := json.Unmarshal(data, &file, json.RejectUnknownMembers(true)); err != nil {
		return catalogFile{}, describeJSONError(err)
	}
	if file.Servers == nil {
		return catalogFile{}, errors.New(`missing "servers" (or "mcpServers") object`)
	}
	return file, nil
}

// LoadCatalog reads and validates the catalog at path. env looks up
// environment variables (os.LookupEnv in production); every tokenEnv must
// be set to a nonempty value.
func LoadCatalog(path string, env func(string) (string, bool)) (Catalog, error) {
	f, err := os.Open(path)
	if err != nil {
		return Catalog{}, fmt.Errorf("MCP catalog: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxCatalogBytes+1))
	if err != nil {
		return Catalog{}, fmt.Errorf("MCP catalog %s: %w", path, err)
	}
	if len(data) > MaxCatalogBytes {
		return Catalog{}, fmt.Errorf("MCP catalog %s: larger than %d KiB", path, MaxCatalogBytes>>10)
	}
	c, err := ParseCatalog(data, env)
	if err != nil {
		return Catalog{}, fmt.Errorf("MCP catalog %s: %w", path, err)
	}
	c.Path = path
	return c, nil
}

// ParseCatalog validates catalog bytes; LoadCatalog is the usual entry.
// Unknown members, duplicate names, invalid UTF-8 and trailing data are
// all rejected.
func ParseCatalog(data []byte, env func(string) (string, bool)) (Catalog, error) {
	file, err := decodeCatalog(data)
	if err != nil {
		return Catalog{}, err
	}
	aliases := make([]string, 0, len(file.Servers))
	for alias := range file.Servers {
		aliases = append(aliases, alias)
	}
	slices.Sort(aliases)
	c := Catalog{Servers: make([]Server, 0, len(aliases))}
	for _, alias := range aliases {
		s, err := parseServer(alias, file.Servers[alias], env)
		if err != nil {
			return Catalog{}, fmt.Errorf("server %q: %w", alias, err)
		}
		c.Servers = append(c.Servers, s)
	}
	return c, nil
}

func parseServer(alias string, f serverFile, env func(string) (string, bool)) (Server, error) {
	if err := checkAlias(alias); err != nil {
		return Server{}, err
	}
	s := Server{Alias: alias, CallTimeout: DefaultCallTimeout}
	secretVars, err := expandServer(&f, env)
	if err != nil {
		return Server{}, err
	}
	s.SecretVars = secretVars
	if err := checkServerType(f); err != nil {
		return Server{}, err
	}
	switch {
	case f.URL == nil && f.Command == nil:
		return Server{}, errors.New(`either "url" (a remote server) or "command" (a stdio server) is required`)
	case f.URL != nil && f.Command != nil:
		return Server{}, errors.New(`"url" and "command" exclude each other`)
	case f.Command != nil:
		if err := parseStdio(&s, f); err != nil {
			return Server{}, err
		}
	default:
		if err := parseRemote(&s, f); err != nil {
			return Server{}, err
		}
	}
	if err := parseToken(&s, f, env); err != nil {
		return Server{}, err
	}
	if err := parseToolLists(&s, f); err != nil {
		return Server{}, err
	}
	if f.CallTimeoutMs != nil {
		ms := *f.CallTimeoutMs
		if ms <= 0 || ms > MaxCallTimeout.Milliseconds() {
			return Server{}, fmt.Errorf(`"callTimeoutMs" must be between 1 and %d`, MaxCallTimeout.Milliseconds())
		}
		s.CallTimeout = time.Duration(ms) * time.Millisecond
	}
	return s, nil
}

func parseToken(s *Server, f serverFile, env func(string) (string, bool)) error {
	if f.TokenEnv == nil {
		return nil
	}
	name := *f.TokenEnv
	if !envNamePattern().MatchString(name) {
		return fmt.Errorf(`"tokenEnv" must match %s`, envNamePattern())
	}
	value, ok := env(name)
	if !ok || value == "" {
		return fmt.Errorf("environment variable %s (tokenEnv) must be set", name)
	}
	if !validToken(value) {
		// Never echo the value: it is a secret.
		return fmt.Errorf("environment variable %s (tokenEnv) holds spaces or control characters", name)
	}
	s.TokenEnv = name
	s.token = func() string { return value }
	return nil
}

// parseToolLists checks allowedTools (optional: without it every listed
// tool is offered) and disallowedTools.
func parseToolLists(s *Server, f serverFile) error {
	if f.AllowedTools != nil {
		if len(*f.AllowedTools) == 0 {
			return errors.New(`"allowedTools" must name at least one tool (leave it out to offer every tool)`)
		}
		if err := checkToolList(s.Alias, "allowedTools", *f.AllowedTools); err != nil {
			return err
		}
		s.AllowedTools = slices.Clone(*f.AllowedTools)
	}
	if f.DisallowedTools != nil {
		if err := checkToolList(s.Alias, "disallowedTools", *f.DisallowedTools); err != nil {
			return err
		}
		s.DisallowedTools = slices.Clone(*f.DisallowedTools)
	}
	return nil
}

func checkToolList(alias, member string, tools []string) error {
	seen := make(map[string]bool, len(tools))
	for _, tool := range tools {
		if tool == "" {
			return fmt.Errorf(`%q has an empty name`, member)
		}
		if strings.ContainsFunc(tool, unicode.IsControl) {
			return fmt.Errorf(`%q entry %q has control characters`, member, tool)
		}
		if seen[tool] {
			return fmt.Errorf(`%q lists %q twice`, member, tool)
		}
		seen[tool] = true
		if _, err := ToolName(alias, tool); err != nil {
			return err
		}
	}
	return nil
}

// parseStdio validates the members of a stdio server. A token travels in
// an HTTP header only; a stdio server gets its variables through passEnv.
func parseStdio(s *Server, f serverFile) error {
	if f.TokenEnv != nil {
		return errors.New(`"tokenEnv" belongs to a remote server ("url"); a stdio server gets variables through "passEnv"`)
	}
	if f.Headers != nil || f.OAuth != nil {
		return errors.New(`"headers" and "oauth" belong to a remote server ("url")`)
	}
	for name := range f.Env {
		if !envNamePattern().MatchString(name) {
			return fmt.Errorf(`"env" name %q must match %s`, name, envNamePattern())
		}
	}
	if len(f.Env) > 0 {
		s.Env = maps.Clone(f.Env)
	}
	cmd := *f.Command
	switch {
	case cmd == "":
		return errors.New(`"command" must not be empty`)
	case strings.ContainsFunc(cmd, unicode.IsControl):
		return errors.New(`"command" has control characters`)
	case strings.Contains(cmd, "/") && !filepath.IsAbs(cmd):
		return fmt.Errorf(`"command" %q must be an absolute path or a name looked up on PATH`, cmd)
	}
	s.Command = cmd
	if f.Args != nil {
		for _, a := range *f.Args {
			if strings.ContainsRune(a, 0) {
				return errors.New(`"args" has an argument with a NUL byte`)
			}
		}
		s.Args = slices.Clone(*f.Args)
	}
	if f.PassEnv != nil {
		seen := make(map[string]bool, len(*f.PassEnv))
		for _, name := range *f.PassEnv {
			if !envNamePattern().MatchString(name) {
				return fmt.Errorf(`"passEnv" entry %q must match %s`, name, envNamePattern())
			}
			if seen[name] {
				return fmt.Errorf(`"passEnv" lists %q twice`, name)
			}
			seen[name] = true
		}
		s.PassEnv = slices.Clone(*f.PassEnv)
	}
	return nil
}

// checkAlias keeps aliases usable in "--mcp a,b" and printable in logs.
func checkAlias(alias string) error {
	switch {
	case alias == "":
		return errors.New("the alias must not be empty")
	case strings.Contains(alias, ","):
		return errors.New("the alias must not contain a comma")
	case strings.ContainsFunc(alias, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }):
		return errors.New("the alias must not contain spaces or control characters")
	}
	return nil
}

// validToken rejects what cannot travel in an HTTP header value unchanged.
func validToken(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] <= ' ' || v[i] == 0x7f {
			return false
		}
	}
	return true
}

// describeJSONError turns a decoding error into one line that points at the
// offending member without quoting the catalog's content.
func describeJSONError(err error) error {
	var se *json.SemanticError
	if !errors.As(err, &se) {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	where := string(se.JSONPointer)
	if where == "" {
		where = "/"
	}
	if errors.Is(se.Err, json.ErrUnknownName) {
		return fmt.Errorf("invalid JSON at %s: unknown member", where)
	}
	if want := expectedKind(se.GoType); want != "" {
		return fmt.Errorf("invalid JSON at %s: expected %s", where, want)
	}
	return fmt.Errorf("invalid JSON at %s: %w", where, se.Err)
}

// expectedKind names the JSON value the catalog wanted for a Go type.
func expectedKind(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return ""
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int64:
		return "an integer"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice:
		return "an array of strings"
	}
	return ""
}

// Select picks servers by the values of --mcp flags (each "a,b", the flag
// repeatable) in first-mention order; a repeated alias is taken once. An
// unknown or empty alias is an error.
func Select(c Catalog, flags []string) ([]Server, error) {
	aliases, err := splitAliases(flags)
	if err != nil {
		return nil, err
	}
	byAlias := make(map[string]Server, len(c.Servers))
	for _, s := range c.Servers {
		byAlias[s.Alias] = s
	}
	out := make([]Server, 0, len(aliases))
	names := make(map[string]string)
	for _, a := range aliases {
		s, ok := byAlias[a]
		if !ok {
			known := make([]string, 0, len(c.Servers))
			for _, s := range c.Servers {
				known = append(known, s.Alias)
			}
			return nil, fmt.Errorf("unknown MCP server %q (the catalog has: %s)", a, strings.Join(known, ", "))
		}
		// Names are checked here, not per server, because base64url
		// concatenations of different pairs could in principle collide.
		for _, tool := range s.AllowedTools {
			name, err := ToolName(s.Alias, tool)
			if err != nil {
				return nil, err
			}
			if other, dup := names[name]; dup {
				return nil, fmt.Errorf("MCP tools %s and %s share the name %s", other, Display(s.Alias, tool), name)
			}
			names[name] = Display(s.Alias, tool)
		}
		out = append(out, s)
	}
	return out, nil
}

func splitAliases(flags []string) ([]string, error) {
	var out []string
	seen := make(map[string]bool)
	for _, flag := range flags {
		for a := range strings.SplitSeq(flag, ",") {
			a = strings.TrimSpace(a)
			if a == "" {
				return nil, fmt.Errorf("--mcp %q: empty server alias", flag)
			}
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	return out, nil
}

// Configure is what the CLI calls for its --mcp flags before creating any
// session file: with no flags it returns nothing and reads nothing;
// otherwise it loads the catalog named by ConfigEnv and selects the servers.
func Configure(flags []string, env func(string) (string, bool)) ([]Server, error) {
	aliases, err := splitAliases(flags)
	if err != nil || len(aliases) == 0 {
		return nil, err
	}
	path, _ := env(ConfigEnv)
	if path == "" {
		return nil, ErrConfigNotSet
	}
	c, err := LoadCatalog(path, env)
	if err != nil {
		return nil, err
	}
	return Select(c, flags)
}
