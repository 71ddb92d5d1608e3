package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// userSettings writes the user's settings file under a fresh
// XDG_CONFIG_HOME with mode perm and returns its path.
func userSettings(t *testing.T, c *cliRun, content string, perm os.FileMode) string {
	t.Helper()
	xdg := filepath.Join(t.TempDir(), "xdg")
	path := filepath.Join(xdg, "tiny-go", "config.toml")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
	c.env["XDG_CONFIG_HOME"] = xdg
	return path
}

// TestSettingsFilesDriveARun: the endpoint from the project's file, the
// model and key from the user's, in the precedence order.
func TestSettingsFilesDriveARun(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Text: "a"}, providertest.Reply{Text: "b"}, providertest.Reply{Text: "c"})
	c := newCLI(t, nil)
	delete(c.env, "OPENROUTER_API_KEY")
	userSettings(t, c, "model = \"user/model\"\napi_key = \"sk-from-file\"\n", 0o600)
	c.write(".tiny-agent/config.toml", "endpoint = \""+srv.URL()+"\"\n")

	if code, _, stderr := c.main("", "hello"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	c.env["TINY_MODEL"] = "env/model"
	if code, _, stderr := c.main("", "hello"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if code, _, stderr := c.main("", "--model", "flag/model", "hello"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, want := range []string{"user/model", "env/model", "flag/model"} {
		if got := reqs[i].Chat.Model; got != want {
			t.Errorf("request %d: model %q, want %q", i, got, want)
		}
		if got := reqs[i].Header.Get("Authorization"); got != "Bearer sk-from-file" {
			t.Errorf("request %d: Authorization %q", i, got)
		}
	}

	// The flag-only settings come from the files too: a sandbox that is
	// off does not take --writable.
	c.write(".tiny-agent/config.toml", "endpoint = \""+srv.URL()+"\"\nsandbox = \"off\"\n")
	if code, _, stderr := c.main("", "--writable", c.dir, "hello"); code != 2 || !strings.Contains(stderr, "--writable needs --sandbox workspace") {
		t.Errorf("sandbox from the file: exit %d, %q", code, stderr)
	}
}

// TestSettingsFileErrors: a file that cannot be used stops a run before
// any session exists, with one line naming the file, line and key.
func TestSettingsFileErrors(t *testing.T) {
	c := newCLI(t, nil)
	project := filepath.Join(c.dir, ".tiny-agent", "config.toml")
	for _, tc := range []struct{ content, want string }{
		{"model = \"m\"\nendpoint = \n", project + ":2: TOML syntax error"},
		{"\nsandbox = \"workspace\"\nsandbox_mode = \"off\"\n", project + ":3: sandbox_mode: unknown key"},
		{"idle_timeout = 90\n", project + ":1: idle_timeout: wrong type: TOML integer where a string is wanted"},
		{"api_key = \"sk-leak\"\n", project + ":1: api_key: a key is only read from a file no one else can read: run chmod 600 " + project},
	} {
		c.write(".tiny-agent/config.toml", tc.content)
		code, _, stderr := c.main("", "hello")
		if code != 2 || !strings.HasPrefix(stderr, "tiny-go: "+tc.want) || strings.Count(stderr, "\n") != 1 || strings.Contains(stderr, "sk-leak") {
			t.Errorf("%q: exit %d, %q", tc.content, code, stderr)
		}
		if n := len(c.sessions()); n != 0 {
			t.Errorf("%d session files", n)
		}
	}
}

// TestConfigCommand runs `tiny-go config` as a real process: every setting
// with its value and where it came from, the key never shown.
func TestConfigCommand(t *testing.T) {
	bin, err := exec.LookPath("tiny-go")
	if err != nil {
		t.Fatalf("tiny-go is not installed by TestMain: %v", err)
	}
	c := newCLI(t, nil)
	user := userSettings(t, c, "model = \"user/model\"\n# the key\napi_key = \"sk-never-shown\"\nreasoning = \"high\"\n", 0o600)
	c.write(".tiny-agent/config.toml", "reasoning = \"low\"\nendpoint = \"http://127.0.0.1:9/v1\"\n\n[mcp_servers.docs]\nurl = \"https://docs.example/mcp\"\nallowedTools = [\"search\"]\n")
	project := filepath.Join(c.dir, ".tiny-agent", "config.toml")
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = c.dir
		cmd.Env = []string{childEnv + "=1", "XDG_CONFIG_HOME=" + c.env["XDG_CONFIG_HOME"], "TINY_MODEL=env/model", "PATH=" + os.Getenv("PATH")}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("tiny-go %s: %v: %s", strings.Join(args, " "), err, stderr.String())
		}
		if strings.Contains(stdout.String(), "sk-never-shown") {
			t.Errorf("the key is printed: %s", stdout.String())
		}
		return stdout.String()
	}

	out := run("config", "--idle-timeout", "5s")
	rows := map[string][]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 1 {
			rows[f[0]] = f[1:]
		}
	}
	for key, want := range map[string]string{
		"model":            "env/model env TINY_MODEL",
		"endpoint":         "http://127.0.0.1:9/v1 " + project + ":2",
		"reasoning":        "low " + project + ":1",
		"api_key":          "(set, not shown) " + user + ":3",
		"idle_timeout":     "5s flag --idle-timeout",
		"request_timeout":  "10m default",
		"sandbox":          "workspace default",
		"mcp_servers.docs": project + ":4",
		"user":             "settings: " + user,
		"project":          "settings: " + project,
	} {
		if got := strings.Join(rows[key], " "); got != want {
			t.Errorf("row %s: %q, want %q\n%s", key, got, want, out)
		}
	}

	var doc struct {
		Files []struct {
			Scope, Path string
			Exists      bool
		} `json:"files"`
		Settings []struct {
			Key, Value, From string
			Set, Secret      bool
			Source           struct {
				Kind, Name, File string
				Line             int
			}
		} `json:"settings"`
		MCPServers []struct {
			Alias  string
			Source struct{ Line int }
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(run("config", "--json", "--model", "flag/model")), &doc, json.MatchCaseInsensitiveNames(true)); err != nil {
		t.Fatal(err)
	}
	if len(doc.Files) != 2 || doc.Files[0].Path != user || doc.Files[1].Path != project || !doc.Files[1].Exists {
		t.Errorf("files %+v", doc.Files)
	}
	got := map[string]string{}
	for _, s := range doc.Settings {
		got[s.Key] = s.Value + " | " + s.Source.Kind + " " + s.Source.Name + s.Source.File + ":" + strconv.Itoa(s.Source.Line) + " | " + s.From
		if s.Key == "api_key" && (!s.Secret || !s.Set || s.Value != "") {
			t.Errorf("api_key %+v", s)
		}
	}
	for key, want := range map[string]string{
		"model":    "flag/model | flag --model:0 | flag --model",
		"endpoint": "http://127.0.0.1:9/v1 | project " + project + ":2 | " + project + ":2",
		"api_key":  " | user " + user + ":3 | " + user + ":3",
	} {
		if got[key] != want {
			t.Errorf("%s: %q, want %q", key, got[key], want)
		}
	}
	if len(doc.MCPServers) != 1 || doc.MCPServers[0].Alias != "docs" || doc.MCPServers[0].Source.Line != 4 {
		t.Errorf("mcpServers %+v", doc.MCPServers)
	}
}

// TestMCPListFromSettings: the [mcp_servers] of the project's file are the
// catalog of `mcp list` and --mcp when TINY_MCP_CONFIG is not set.
func TestMCPListFromSettings(t *testing.T) {
	c := newCLI(t, nil)
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	script, err := filepath.Abs("../mcp/testdata/pyserver.py")
	if err != nil {
		t.Fatal(err)
	}
	c.env["MCP_TEST_DIR"] = c.dir
	c.env["PATH"] = os.Getenv("PATH")
	c.write(".tiny-agent/config.toml", "model = \"m\"\n\n[mcp_servers.py]\ncommand = "+strconv.Quote(py)+"\nargs = ["+strconv.Quote(script)+", \"normal\"]\npassEnv = [\"MCP_TEST_DIR\"]\nallowedTools = [\"echo\", \"env\"]\n")
	project := filepath.Join(c.dir, ".tiny-agent", "config.toml")

	code, stdout, stderr := c.main("", "mcp", "list", "--json")
	var out struct {
		Catalog string                                      `json:"catalog"`
		Servers []struct{ Alias, Transport, Status string } `json:"servers"`
	}
	if err := json.Unmarshal([]byte(stdout), &out, json.MatchCaseInsensitiveNames(true)); err != nil || code != 0 {
		t.Fatalf("exit %d, %v: %s %s", code, err, stdout, stderr)
	}
	if out.Catalog != project || len(out.Servers) != 1 || out.Servers[0].Alias != "py" || out.Servers[0].Transport != "stdio" || out.Servers[0].Status != "connected" {
		t.Errorf("%+v", out)
	}

	// TINY_MCP_CONFIG is merged with the files' servers, and wins for an
	// alias both define; each row names its source.
	catalog := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(catalog, []byte(`{"mcpServers":{"py":{"command":"no-such-server-xyz"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c.env["TINY_MCP_CONFIG"] = catalog
	if code, stdout, _ := c.main("", "mcp", "list"); code != 1 || !strings.Contains(stdout, "no-such-server-xyz") || !strings.Contains(stdout, "env: "+catalog) {
		t.Errorf("with TINY_MCP_CONFIG: exit %d, %q", code, stdout)
	}
	delete(c.env, "TINY_MCP_CONFIG")
	if code, stdout, _ := c.main("", "mcp", "list"); code != 0 || !strings.Contains(stdout, "settings: "+project+":3") {
		t.Errorf("source of a settings server: exit %d, %q", code, stdout)
	}

	// A server the MCP catalog rules refuse is named with its file and line.
	c.write(".tiny-agent/config.toml", "\n[mcp_servers.bad]\ncommand = \"x\"\nallowedTools = []\n")
	code, _, stderr = c.main("", "mcp", "list")
	if code == 0 || !strings.HasPrefix(stderr, "tiny-go: "+project+":2: mcp_servers.bad: ") || !strings.Contains(stderr, "allowedTools") {
		t.Errorf("bad server: exit %d, %q", code, stderr)
	}
	if code, _, stderr := c.main("", "--mcp", "bad", "hello"); code != 2 || !strings.HasPrefix(stderr, "tiny-go: "+project+":2: mcp_servers.bad: ") {
		t.Errorf("--mcp with a bad server: exit %d, %q", code, stderr)
	}
}
