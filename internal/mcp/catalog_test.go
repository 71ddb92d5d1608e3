package mcp

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"
)

var tokenEnv = testEnv(map[string]string{"TOK": testToken, "EMPTY": "", "SPACED": "a b", "NEWLINE": "a\nb"})

func TestParseCatalogValid(t *testing.T) {
	c, err := ParseCatalog([]byte(`{"servers":{
		"zeta": {"url": "HTTPS://API.Example.COM:443/mcp?x=1", "tokenEnv": "TOK", "allowedTools": ["b", "a"], "callTimeoutMs": 1500},
		"alpha": {"url": "http://127.0.0.1:80/", "allowedTools": ["only"]}
	}}`), tokenEnv)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Servers) != 2 || c.Servers[0].Alias != "alpha" || c.Servers[1].Alias != "zeta" {
		t.Fatalf("servers not sorted by alias: %+v", c.Servers)
	}
	a, z := c.Servers[0], c.Servers[1]
	if a.Endpoint != "http://127.0.0.1/" || a.TokenEnv != "" || a.AuthHeader() != "" || a.CallTimeout != 30*time.Second {
		t.Errorf("alpha = %+v", a)
	}
	if z.Endpoint != "https://api.example.com/mcp?x=1" || z.TokenEnv != "TOK" || z.AuthHeader() != "Authorization" ||
		z.CallTimeout != 1500*time.Millisecond || strings.Join(z.AllowedTools, ",") != "b,a" || z.bearer() != testToken {
		t.Errorf("zeta = %+v", z)
	}
}

func TestServerNeverPrintsToken(t *testing.T) {
	c, err := ParseCatalog([]byte(`{"servers":{"s":{"url":"https://h","tokenEnv":"TOK","allowedTools":["t"]}}}`), tokenEnv)
	if err != nil {
		t.Fatal(err)
	}
	type holder struct{ s Server } // reached only by reflection
	for _, format := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d", "%t"} {
		assertNoToken(t, format, fmt.Sprintf(format, c))
		assertNoToken(t, format, fmt.Sprintf(format, c.Servers))
		assertNoToken(t, format, fmt.Sprintf(format, &c.Servers[0]))
		assertNoToken(t, format, fmt.Sprintf(format, holder{c.Servers[0]}))
	}
	if got := fmt.Sprint(c.Servers[0]); got != `{Alias:s Endpoint:https://h TokenEnv:TOK AllowedTools:["t"] CallTimeout:30s}` {
		t.Errorf("Server prints as %s", got)
	}
}

func TestParseCatalogRejects(t *testing.T) {
	srv := func(body string) string { return `{"servers":{"s":{` + body + `}}}` }
	const ok = `"url":"https://h","allowedTools":["t"]`
	tests := []struct {
		name, json, want string
	}{
		{"not an object", `[]`, "invalid JSON at /: expected an object"},
		{"no servers", `{}`, `missing "servers" (or "mcpServers") object`},
		{"null servers", `{"servers":null}`, `missing "servers" (or "mcpServers") object`},
		{"unknown top-level member", `{"servers":{},"extra":1}`, "invalid JSON at /extra: unknown member"},
		{"unknown server member", srv(ok + `,"header":{"X":"y"}`), "invalid JSON at /servers/s/header: unknown member"},
		{"literal token member", srv(ok + `,"token":"` + testToken + `"`), "invalid JSON at /servers/s/token: unknown member"},
		{"case-folded member", srv(`"URL":"https://h","allowedTools":["t"]`), "invalid JSON at /servers/s/URL: unknown member"},
		{"duplicate server", `{"servers":{"s":{` + ok + `},"s":{` + ok + `}}}`, `duplicate object member name "s"`},
		{"duplicate member", srv(ok + `,"url":"https://h"`), `duplicate object member name "url"`},
		{"duplicate top-level", `{"servers":{},"servers":{}}`, `duplicate object member name "servers"`},
		{"trailing data", `{"servers":{}} {}`, "invalid JSON"},
		{"invalid UTF-8", "{\"servers\":{\"s\xff\":{}}}", "invalid UTF-8"},
		{"url missing", srv(`"allowedTools":["t"]`), `server "s": either "url" (a remote server) or "command" (a stdio server) is required`},
		{"url wrong type", srv(`"url":5,"allowedTools":["t"]`), "invalid JSON at /servers/s/url: expected a string"},
		{"http remote", srv(`"url":"http://example.com","allowedTools":["t"]`), "http is allowed only for loopback"},
		{"ftp", srv(`"url":"ftp://h","allowedTools":["t"]`), "must use https"},
		{"userinfo", srv(`"url":"https://u:` + testToken + `@h/","allowedTools":["t"]`), "must not contain userinfo"},
		{"fragment", srv(`"url":"https://h/#frag","allowedTools":["t"]`), "must not have a fragment"},
		{"tokenEnv pattern", srv(ok + `,"tokenEnv":"1BAD"`), `"tokenEnv" must match`},
		{"tokenEnv with dash", srv(ok + `,"tokenEnv":"MY-TOKEN"`), `"tokenEnv" must match`},
		{"tokenEnv empty name", srv(ok + `,"tokenEnv":""`), `"tokenEnv" must match`},
		{"tokenEnv unset", srv(ok + `,"tokenEnv":"UNSET"`), "environment variable UNSET (tokenEnv) must be set"},
		{"tokenEnv empty value", srv(ok + `,"tokenEnv":"EMPTY"`), "environment variable EMPTY (tokenEnv) must be set"},
		{"token with space", srv(ok + `,"tokenEnv":"SPACED"`), "holds spaces or control characters"},
		{"token with newline", srv(ok + `,"tokenEnv":"NEWLINE"`), "holds spaces or control characters"},
		{"allowedTools empty", srv(`"url":"https://h","allowedTools":[]`), `leave it out to offer every tool`},
		{"allowedTools empty", srv(`"url":"https://h","allowedTools":[]`), `"allowedTools" must name at least one tool`},
		{"allowedTools not strings", srv(`"url":"https://h","allowedTools":[1]`), "expected a string"},
		{"allowedTools empty name", srv(`"url":"https://h","allowedTools":[""]`), "has an empty name"},
		{"allowedTools duplicate", srv(`"url":"https://h","allowedTools":["a","a"]`), `lists "a" twice`},
		{"allowedTools control", srv(`"url":"https://h","allowedTools":["a\u0007"]`), "control characters"},
		{"timeout zero", srv(ok + `,"callTimeoutMs":0`), `"callTimeoutMs" must be between 1 and 86400000`},
		{"timeout negative", srv(ok + `,"callTimeoutMs":-5`), `"callTimeoutMs" must be between 1`},
		{"timeout too large", srv(ok + `,"callTimeoutMs":86400001`), `"callTimeoutMs" must be between 1`},
		{"timeout fractional", srv(ok + `,"callTimeoutMs":1.5`), "expected an integer"},
		{"timeout string", srv(ok + `,"callTimeoutMs":"100"`), "expected an integer"},
		{"alias empty", `{"servers":{"":{` + ok + `}}}`, "the alias must not be empty"},
		{"alias comma", `{"servers":{"a,b":{` + ok + `}}}`, "must not contain a comma"},
		{"alias space", `{"servers":{"a b":{` + ok + `}}}`, "must not contain spaces"},
		{"url and command", srv(ok + `,"command":"npx"`), `"url" and "command" exclude each other`},
		{"args on a remote server", srv(ok + `,"args":["x"]`), `"args", "env" and "passEnv" belong to a stdio server`},
		{"passEnv on a remote server", srv(ok + `,"passEnv":["X"]`), `"args", "env" and "passEnv" belong to a stdio server`},
		{"command empty", srv(`"command":"","allowedTools":["t"]`), `"command" must not be empty`},
		{"command relative path", srv(`"command":"./server","allowedTools":["t"]`), `must be an absolute path or a name looked up on PATH`},
		{"command control", srv(`"command":"a\u0000b","allowedTools":["t"]`), `"command" has control characters`},
		{"tokenEnv on a stdio server", srv(`"command":"npx","tokenEnv":"TOK","allowedTools":["t"]`), `"tokenEnv" belongs to a remote server`},
		{"passEnv pattern", srv(`"command":"npx","passEnv":["A-B"],"allowedTools":["t"]`), `"passEnv" entry "A-B" must match`},
		{"passEnv twice", srv(`"command":"npx","passEnv":["A","A"],"allowedTools":["t"]`), `"passEnv" lists "A" twice`},
		{"args NUL", srv(`"command":"npx","args":["a\u0000"],"allowedTools":["t"]`), `"args" has an argument with a NUL byte`},
		{"disallowedTools twice", srv(`"command":"npx","disallowedTools":["a","a"]`), `"disallowedTools" lists "a" twice`},
		{"bad type", srv(`"command":"npx","type":"ws"`), `"type" must be "stdio", "http" or "sse"`},
		{"stdio type with url", srv(`"url":"https://h","type":"stdio"`), `"type": "stdio" needs "command"`},
		{"headers on stdio", srv(`"command":"npx","headers":{"A":"b"}`), `"headers" and "oauth" belong to a remote server`},
		{"bad header value", srv(`"url":"https://h","headers":{"A":"b\r\nc"}`), `"headers" value of A has control characters`},
		{"unset variable", srv(`"url":"https://h/${NOPE_NOT_SET}"`), `environment variable NOPE_NOT_SET is not set`},
		{"client credentials without secret", srv(`"url":"https://h","oauth":{"grant":"client_credentials","clientId":"x"}`), `needs either "clientSecret" or "privateKeyFile"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseCatalog([]byte(tt.json), tokenEnv)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			assertNoToken(t, "error", err.Error())
		})
	}
}

func TestLoadCatalog(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(path, []byte(`{"servers":{"s":{"url":"https://h","allowedTools":["t"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadCatalog(path, tokenEnv)
	if err != nil || c.Path != path || len(c.Servers) != 1 {
		t.Fatalf("LoadCatalog = %+v, %v", c, err)
	}

	if _, err := LoadCatalog(filepath.Join(dir, "missing.json"), tokenEnv); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"servers":{"s":{}}}`), 0o600)
	if _, err := LoadCatalog(bad, tokenEnv); err == nil || !strings.HasPrefix(err.Error(), "MCP catalog "+bad+": ") {
		t.Errorf("invalid catalog: %v", err)
	}
	big := filepath.Join(dir, "big.json")
	os.WriteFile(big, []byte(`{"servers":{}}`+strings.Repeat(" ", MaxCatalogBytes)), 0o600)
	if _, err := LoadCatalog(big, tokenEnv); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("oversize catalog: %v", err)
	}
}

func testCatalog(t *testing.T) Catalog {
	t.Helper()
	c, err := ParseCatalog([]byte(`{"servers":{
		"a": {"url":"https://a.example","allowedTools":["t1","t2"]},
		"b": {"url":"https://b.example","allowedTools":["t"]},
		"c": {"url":"https://c.example","allowedTools":["t"]}
	}}`), tokenEnv)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSelect(t *testing.T) {
	c := testCatalog(t)
	got, err := Select(c, []string{"c,a", " b ", "a"})
	if err != nil {
		t.Fatal(err)
	}
	var aliases []string
	for _, s := range got {
		aliases = append(aliases, s.Alias)
	}
	if strings.Join(aliases, ",") != "c,a,b" {
		t.Errorf("selected %v, want first-mention order c,a,b", aliases)
	}
	if got, err := Select(c, nil); err != nil || len(got) != 0 {
		t.Errorf("no flags: %v, %v", got, err)
	}

	_, err = Select(c, []string{"a,nope"})
	if err == nil || err.Error() != `unknown MCP server "nope" (the catalog has: a, b, c)` {
		t.Errorf("unknown alias: %v", err)
	}
	for _, flag := range []string{"", "a,", ",a", "a,,b"} {
		if _, err := Select(c, []string{flag}); err == nil || !strings.Contains(err.Error(), "empty server alias") {
			t.Errorf("--mcp %q: %v", flag, err)
		}
	}
}

func TestConfigure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.json")
	os.WriteFile(path, []byte(`{"servers":{"s":{"url":"https://h","tokenEnv":"TOK","allowedTools":["t"]}}}`), 0o600)

	// No --mcp: nothing is read, not even the variable.
	got, err := Configure(nil, func(string) (string, bool) { t.Fatal("environment read"); return "", false })
	if err != nil || got != nil {
		t.Fatalf("no flags: %v, %v", got, err)
	}

	for _, env := range []map[string]string{{}, {ConfigEnv: ""}} {
		_, err = Configure([]string{"s"}, testEnv(env))
		if !errors.Is(err, ErrConfigNotSet) || err.Error() != "TINY_MCP_CONFIG must be set to use --mcp" {
			t.Errorf("env %v: err = %v", env, err)
		}
	}

	got, err = Configure([]string{"s"}, testEnv(map[string]string{ConfigEnv: path, "TOK": testToken}))
	if err != nil || len(got) != 1 || got[0].bearer() != testToken {
		t.Fatalf("configured %+v, %v", got, err)
	}
	_, err = Configure([]string{"x"}, testEnv(map[string]string{ConfigEnv: path, "TOK": testToken}))
	if err == nil || !strings.Contains(err.Error(), `unknown MCP server "x"`) {
		t.Errorf("unknown alias: %v", err)
	}
	_, err = Configure([]string{"s"}, testEnv(map[string]string{ConfigEnv: path}))
	if err == nil || !strings.Contains(err.Error(), "TOK (tokenEnv) must be set") {
		t.Errorf("unset token: %v", err)
	}
}

func FuzzParseCatalog(f *testing.F) {
	for _, seed := range []string{
		`{"servers":{"a":{"url":"https://h/mcp","tokenEnv":"TOK","allowedTools":["x","y"],"callTimeoutMs":100}}}`,
		`{"servers":{"b":{"url":"http://[::1]:80/","allowedTools":["z"]}}}`,
		`{"servers":{"c":{"url":"https://u@h#f","allowedTools":[]}}}`,
		`{"servers":{}}`,
		`{"servers":{"fs":{"command":"npx","args":["-y","server","."],"passEnv":["HOME_DIR"],"allowedTools":["read"]}}}`,
		`{"servers":{"fs":{"command":"/usr/bin/srv","url":"https://h","allowedTools":["read"]}}}`,
		`{"servers":{"a":{}},"servers":{}}`,
		`{"servers":{"a":{"url":"HTTPS://H:0443","allowedTools":["x"],"extra":true}}}`,
		`[]`,
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCatalog(data, tokenEnv)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			assertNoToken(t, "error", err.Error())
			return
		}
		for i, s := range c.Servers {
			if i > 0 && c.Servers[i-1].Alias >= s.Alias {
				t.Fatalf("servers not sorted: %q then %q", c.Servers[i-1].Alias, s.Alias)
			}
			switch s.Transport() {
			case TransportStdio:
				if s.Endpoint != "" || s.TokenEnv != "" || s.Command == "" || strings.ContainsFunc(s.Command, unicode.IsControl) {
					t.Fatalf("invalid stdio server accepted: %+v", s)
				}
			default:
				again, err := CanonicalEndpoint(s.Endpoint)
				if err != nil || again != s.Endpoint || s.Args != nil || s.PassEnv != nil {
					t.Fatalf("endpoint %q not canonical: %q, %v", s.Endpoint, again, err)
				}
			}
			if len(s.AllowedTools) == 0 || s.CallTimeout <= 0 || s.CallTimeout > MaxCallTimeout {
				t.Fatalf("invalid server accepted: %+v", s)
			}
			for _, tool := range s.AllowedTools {
				if _, err := ToolName(s.Alias, tool); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

func TestParseCatalogStdio(t *testing.T) {
	c, err := ParseCatalog([]byte(`{"servers":{
		"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "my dir"], "passEnv": ["GIT_AUTHOR_NAME"], "allowedTools": ["read_text_file"], "callTimeoutMs": 60000},
		"git": {"command": "/usr/local/bin/mcp-server-git", "allowedTools": ["git_status"]}
	}}`), tokenEnv)
	if err != nil {
		t.Fatal(err)
	}
	fs, git := c.Servers[0], c.Servers[1]
	if fs.Transport() != TransportStdio || fs.Command != "npx" || strings.Join(fs.Args, "|") != "-y|@modelcontextprotocol/server-filesystem|my dir" ||
		strings.Join(fs.PassEnv, ",") != "GIT_AUTHOR_NAME" || fs.CallTimeout != time.Minute || fs.Endpoint != "" || fs.AuthHeader() != "" {
		t.Errorf("fs = %+v", fs)
	}
	if got := fs.Target(); got != `npx -y @modelcontextprotocol/server-filesystem "my dir"` {
		t.Errorf("target %s", got)
	}
	if git.Transport() != TransportStdio || git.Args != nil || git.Target() != "/usr/local/bin/mcp-server-git" {
		t.Errorf("git = %+v", git)
	}
	if got := fmt.Sprint(fs); !strings.Contains(got, "Command:npx") {
		t.Errorf("printed %s", got)
	}
}
