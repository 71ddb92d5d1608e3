package config

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// setup writes the user's and the project's files (either may be "") and
// returns the options that read them.
func setup(t *testing.T, user, project string) Options {
	t.Helper()
	root := t.TempDir()
	home := filepath.Join(root, "home")
	work := filepath.Join(root, "work")
	write := func(path, data string) {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(work, 0o700); err != nil {
		t.Fatal(err)
	}
	if user != "" {
		write(filepath.Join(home, ".config", "tiny-go", "config.toml"), user)
	}
	if project != "" {
		write(filepath.Join(work, ".tiny-agent", "config.toml"), project)
	}
	env := map[string]string{"HOME": home}
	return Options{WorkDir: work, Getenv: func(k string) string { return env[k] }}
}

func withEnv(o Options, kv ...string) Options {
	base := o.Getenv
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	o.Getenv = func(k string) string {
		if v, ok := m[k]; ok {
			return v
		}
		return base(k)
	}
	return o
}

// TestPrecedence: for a setting with a flag and a variable, every
// combination of the four layers picks the strongest one present.
func TestPrecedence(t *testing.T) {
	for mask := 0; mask < 16; mask++ {
		flag, env, project, user := mask&8 != 0, mask&4 != 0, mask&2 != 0, mask&1 != 0
		var u, p string
		if user {
			u = "model = \"from-user\"\n"
		}
		if project {
			p = "\n\nmodel = \"from-project\"\n"
		}
		o := setup(t, u, p)
		if env {
			o = withEnv(o, "TINY_MODEL", "from-env")
		}
		if flag {
			o.Flags = []FlagValue{{Key: Model, Name: "--model", Value: "from-flag"}}
		}
		s, err := Load(o)
		if err != nil {
			t.Fatal(err)
		}
		got, set := s.Get(Model)
		src := s.Source(Model)
		want, wantKind, wantLine := "", Default, 0
		switch {
		case flag:
			want, wantKind = "from-flag", Flag
		case env:
			want, wantKind = "from-env", Env
		case project:
			want, wantKind, wantLine = "from-project", Project, 3
		case user:
			want, wantKind, wantLine = "from-user", User, 1
		}
		if got != want || set != (want != "") || src.Kind != wantKind || src.Line != wantLine {
			t.Errorf("flag=%v env=%v project=%v user=%v: %q (set %v) from %+v, want %q from %s line %d", flag, env, project, user, got, set, src, want, wantKind, wantLine)
		}
		// Code that reads the environment sees the same value, except a
		// flag's, which it reads from the flag itself.
		if ev := s.Getenv(o.Getenv)("TINY_MODEL"); !flag && ev != want {
			t.Errorf("mask %d: Getenv TINY_MODEL = %q, want %q", mask, ev, want)
		}
	}
}

func TestSourceStrings(t *testing.T) {
	o := setup(t, "endpoint = \"http://u.example/v1\"\nsandbox = \"read-only\"\n", "sandbox = \"off\"\n")
	o = withEnv(o, "TINY_ENDPOINT", "http://env.example/v1")
	o.Flags = []FlagValue{{Key: IdleTimeout, Name: "--idle-timeout", Value: "5s"}}
	s, err := Load(o)
	if err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(o.WorkDir, ".tiny-agent", "config.toml")
	for k, want := range map[Key]string{
		Endpoint:       "env TINY_ENDPOINT",
		Sandbox:        project + ":1",
		IdleTimeout:    "flag --idle-timeout",
		RequestTimeout: "default",
	} {
		if got := s.Source(k).String(); got != want {
			t.Errorf("%s from %q, want %q", k, got, want)
		}
	}
	if v, ok := s.FromFile(Sandbox); !ok || v.Value != "off" {
		t.Errorf("FromFile(sandbox) = %+v, %v", v, ok)
	}
	if _, ok := s.FromFile(Endpoint); ok {
		t.Error("FromFile(endpoint) is set although the variable overrides the file")
	}
}

func TestXDGConfigHome(t *testing.T) {
	env := map[string]string{"HOME": "/home/me", "XDG_CONFIG_HOME": "/xdg"}
	if got := UserFile(func(k string) string { return env[k] }); got != "/xdg/tiny-go/config.toml" {
		t.Errorf("with XDG_CONFIG_HOME: %s", got)
	}
	env["XDG_CONFIG_HOME"] = "relative"
	if got := UserFile(func(k string) string { return env[k] }); got != "/home/me/.config/tiny-go/config.toml" {
		t.Errorf("with a relative XDG_CONFIG_HOME: %s", got)
	}
}

func TestProjectFileFromSubdirectory(t *testing.T) {
	o := setup(t, "", "model = \"p\"\n")
	sub := filepath.Join(o.WorkDir, "a", "b")
	if err := os.MkdirAll(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	if got, want := ProjectFile(sub), filepath.Join(o.WorkDir, ".tiny-agent", "config.toml"); got != want {
		t.Errorf("from a subdirectory: %s, want %s", got, want)
	}
	// The repository root bounds the search.
	if err := os.Mkdir(filepath.Join(o.WorkDir, "a", ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	if got, want := ProjectFile(sub), filepath.Join(sub, ".tiny-agent", "config.toml"); got != want {
		t.Errorf("below a repository root: %s, want %s", got, want)
	}
}

// TestFileErrors: each bad file is one line naming the file, the line and
// the key.
func TestFileErrors(t *testing.T) {
	for _, c := range []struct{ name, data, want string }{
		{"unknown key", "model = \"m\"\n\nmodle = \"x\"\n", ":3: modle: unknown key"},
		{"unknown key in a server", "[mcp_servers.fs]\ncommand = \"x\"\nallowed_tools = [\"a\"]\n", ":3: mcp_servers.fs.allowed_tools: unknown key"},
		{"wrong type", "model = \"m\"\ncontext_window = \"200k\"\n", ":2: context_window: wrong type: TOML string where an integer is wanted"},
		{"wrong type in a list", "writable = \"/tmp\"\n", ":1: writable: wrong type: TOML string where an array of strings is wanted"},
		{"wrong type in a server", "[mcp_servers.fs]\n\nurl = 3\n", ":3: mcp_servers.fs.url: wrong type: TOML integer where a string is wanted"},
		{"syntax error", "model = \"m\"\nendpoint = \n", ":2: TOML syntax error"},
		{"unterminated string", "# c\n\nmodel = \"m\n", ":3: TOML syntax error"},
		{"bad value", "approval = \"never\"\n", ":1: approval: must be ask, edits, auto, plan or review, not \"never\""},
		{"bad duration", "\nidle_timeout = \"soon\"\n", ":2: idle_timeout: must be a positive duration"},
		{"bad URL", "endpoint = \"openrouter.ai\"\n", ":1: endpoint: \"openrouter.ai\" is not an http(s) URL"},
		{"relative writable in the user's file", "writable = [\"build\"]\n", ":1: writable: \"build\" must be an absolute path or start with ~/"},
		{"zero window", "context_window = 0\n", ":1: context_window: must be a positive number of tokens"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := setup(t, c.data, "")
			_, err := Load(o)
			if err == nil {
				t.Fatal("no error")
			}
			file := filepath.Join(o.Getenv("HOME"), ".config", "tiny-go", "config.toml")
			msg := err.Error()
			if !strings.HasPrefix(msg, file+c.want) || strings.Contains(msg, "\n") {
				t.Errorf("error %q, want it to start with %q on one line", msg, file+c.want)
			}
		})
	}
}

// TestAPIKeyNeeds0600: a key in a file others can read is refused, and
// the key never appears in what is printed.
func TestAPIKeyNeeds0600(t *testing.T) {
	const key = "sk-secret-123"
	o := setup(t, "", "\napi_key = \""+key+"\"\n")
	path := filepath.Join(o.WorkDir, ".tiny-agent", "config.toml")
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		_, err := Load(o)
		if err == nil || !strings.HasPrefix(err.Error(), path+":2: api_key: ") || !strings.Contains(err.Error(), "chmod 600") || strings.Contains(err.Error(), key) {
			t.Errorf("mode %04o: %v", mode, err)
		}
	}
	for _, mode := range []os.FileMode{0o600, 0o400} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		s, err := Load(o)
		if err != nil {
			t.Fatalf("mode %04o: %v", mode, err)
		}
		getenv := s.Getenv(o.Getenv)
		for _, name := range KeyVars {
			if getenv(name) != key {
				t.Errorf("%s does not fall back to the file's key", name)
			}
		}
		for _, v := range s.All(nil) {
			if strings.Contains(v.Value, key) || strings.Contains(strings.Join(v.List, ","), key) {
				t.Errorf("All shows the key in %s", v.Key)
			}
		}
	}
	// A variable wins over the file.
	s, err := Load(withEnv(o, "OPENROUTER_API_KEY", "from-env"))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Getenv(withEnv(o, "OPENROUTER_API_KEY", "from-env").Getenv)("OPENROUTER_API_KEY"); got != "from-env" {
		t.Errorf("OPENROUTER_API_KEY = %q", got)
	}
	if src := s.Source(APIKey); src.Kind != Env || src.Name != "OPENROUTER_API_KEY" {
		t.Errorf("api_key source %+v", src)
	}
}

func TestWritableAndServers(t *testing.T) {
	o := setup(t,
		"writable = [\"~/cache\", \"/abs\"]\n[mcp_servers.fs]\ncommand = \"user-fs\"\nallowedTools = [\"read\"]\n[mcp_servers.web]\nurl = \"https://example.com/mcp\"\nallowedTools = [\"get\"]\n",
		"writable = [\"build\"]\n\n[mcp_servers.fs]\ncommand = \"project-fs\"\nargs = [\"--x\"]\nallowedTools = [\"read\", \"write\"]\n")
	s, err := Load(o)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.List(Writable); len(got) != 1 || got[0] != filepath.Join(o.WorkDir, "build") {
		t.Errorf("writable %q (the project's replaces the user's, relative to the project)", got)
	}
	sv := s.Servers()
	if len(sv) != 2 || sv[0].Alias != "fs" || sv[1].Alias != "web" {
		t.Fatalf("servers %+v", sv)
	}
	if sv[0].Source.Kind != Project || sv[0].Source.Line != 3 || !strings.Contains(string(sv[0].JSON), `"command":"project-fs"`) || !strings.Contains(string(sv[0].JSON), `"args":["--x"]`) {
		t.Errorf("fs: %+v %s", sv[0].Source, sv[0].JSON)
	}
	if sv[1].Source.Kind != User || string(sv[1].JSON) != `{"url":"https://example.com/mcp","allowedTools":["get"]}` {
		t.Errorf("web: %+v %s", sv[1].Source, sv[1].JSON)
	}
	if src := s.Source(MCPServers); src.Kind == Default {
		t.Errorf("mcp_servers source %+v", src)
	}
	s2, err := Load(withEnv(o, MCPConfigEnv, "/c.json"))
	if err != nil {
		t.Fatal(err)
	}
	if src := s2.Source(MCPServers); src.Kind != Env || src.Name != MCPConfigEnv {
		t.Errorf("with %s: %+v", MCPConfigEnv, src)
	}
}

// The [lsp] tables of both files reach the lsp package as JSON, the
// user's first, each with the line it starts on.
func TestLSPTables(t *testing.T) {
	o := setup(t,
		"model = \"m\"\n[lsp]\nwait = \"2s\"\n[lsp.python]\noff = true\n",
		"[lsp.go]\ncommand = [\"gopls\", \"serve\"]\n")
	s, err := Load(o)
	if err != nil {
		t.Fatal(err)
	}
	tables := s.LSP()
	if len(tables) != 2 {
		t.Fatalf("tables %+v", tables)
	}
	var user map[string]any
	if err := json.Unmarshal(tables[0].JSON, &user); err != nil {
		t.Fatal(err)
	}
	if tables[0].Source.Kind != User || tables[0].Source.Line != 2 || fmt.Sprint(user) != "map[python:map[off:true] wait:2s]" {
		t.Errorf("user's: %+v %s", tables[0].Source, tables[0].JSON)
	}
	if tables[1].Source.Kind != Project || string(tables[1].JSON) != `{"go":{"command":["gopls","serve"]}}` {
		t.Errorf("project's: %+v %s", tables[1].Source, tables[1].JSON)
	}
}
