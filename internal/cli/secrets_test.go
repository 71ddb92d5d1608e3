package cli

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/secrets"
)

// tiny-go-program is the program exactly as cmd/tiny-go runs it, secrets
// concealed first.
func init() { scriptCommands["tiny-go-program"] = func() { os.Exit(Program()) } }

// A model that hunts for the key with every command it can think of finds
// it nowhere: not in tiny-go's /proc/<pid>/environ, not in any process's,
// not in its own environment. The key (and an MCP token named by the
// catalog) then appears in no file under the working directory (session,
// tool-output and bg logs), in no request body, in no event and in nothing
// tiny-go prints.
func TestSecretsStaySecret(t *testing.T) {
	if testing.Short() {
		t.Skip("runs tiny-go as a real process")
	}
	const key = "sk-or-v1-0123456789abcdef-the-real-key"
	const token = "mcp-token-fedcba9876543210"
	const anthropic = "sk-ant-api03-not-used-here-but-known"
	hunt := []string{
		`cat /proc/$PPID/environ | tr '\0' '\n'`,
		`cat /proc/*/environ 2>/dev/null | tr '\0' '\n'`,
		`ps eww`,
		`env`,
	}
	// The MCP catalog (and its token variable) in TINY_MCP_CONFIG, or in
	// the project's settings file.
	for _, tc := range []struct{ mode, catalog string }{{"off", "env"}, {"workspace", "env"}, {"workspace", "settings"}} {
		mode := tc.mode
		t.Run(mode+"/"+tc.catalog, func(t *testing.T) {
			var calls []providertest.ToolCall
			for i, cmd := range hunt {
				calls = append(calls, toolCall("c"+string(rune('1'+i)), "bash", mustJSON(t, map[string]string{"command": cmd})))
			}
			calls = append(calls, toolCall("c9", "bg", mustJSON(t, map[string]string{"action": "start", "command": hunt[0] + "; " + hunt[3]})))
			srv := providertest.New(t, providertest.Reply{ToolCalls: calls}, providertest.Reply{Text: "found nothing"})
			dir := t.TempDir()
			catalog := filepath.Join(t.TempDir(), "mcp.json")
			if err := os.WriteFile(catalog, []byte(`{"servers":{"docs":{"url":"https://example.com/mcp","tokenEnv":"DOCS_TOKEN"}}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(programAs(t, "tiny-go-program"), "--json", "--sandbox", mode, "find the key")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), childEnv+"=1", "OPENROUTER_API_KEY="+key, "DOCS_TOKEN="+token, "ANTHROPIC_API_KEY="+anthropic,
				"TINY_ENDPOINT="+srv.URL(), "OTEL_SDK_DISABLED=true")
			if tc.catalog == "env" {
				cmd.Env = append(cmd.Env, "TINY_MCP_CONFIG="+catalog)
			} else {
				settings := "[mcp_servers.docs]\nurl = \"https://example.com/mcp\"\ntokenEnv = \"DOCS_TOKEN\"\nallowedTools = [\"search\"]\n"
				if err := os.MkdirAll(filepath.Join(dir, ".tiny-agent"), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, ".tiny-agent", "config.toml"), []byte(settings), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("tiny-go: %v: %s", err, stderr.String())
			}
			places := map[string][]byte{"stdout (events)": stdout.Bytes(), "stderr": stderr.Bytes()}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d model requests, want 2", len(reqs))
			}
			for i, r := range reqs {
				places["request body "+string(rune('1'+i))] = r.Body
			}
			err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				b, err := os.ReadFile(path)
				places[path] = b
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			for where, b := range places {
				for _, s := range []string{key, token, anthropic} {
					if bytes.Contains(b, []byte(s)) {
						t.Errorf("a secret is in %s", where)
					}
				}
				// Concealed at the source: the scrubber had nothing to do.
				if bytes.Contains(b, []byte(secrets.Mask)) {
					t.Errorf("a secret reached a tool result (masked) in %s", where)
				}
			}
			// The hunt ran: the model saw real output of each command.
			sent := string(reqs[1].Body)
			for _, want := range []string{"PATH=", "ps eww", "TINY_ENDPOINT="} {
				if !strings.Contains(sent, want) {
					t.Errorf("the results sent to the model lack %q: the commands did not run as meant", want)
				}
			}
		})
	}
}

// The second line of defence: a tool result that contains a key tiny-go
// knows is masked before it is committed or sent.
func TestToolResultsAreScrubbed(t *testing.T) {
	const key = "sk-or-v1-scrub-me-0123456789"
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "read", `{"path":"leak.txt"}`)}},
		providertest.Reply{Text: "ok"},
	)
	c := newCLI(t, srv)
	c.env["OPENROUTER_API_KEY"] = key
	c.write("leak.txt", "the key is "+key+"\n")
	code, stdout, stderr := c.main("", "--json", "read the leak")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(c.sessions()[0])
	if err != nil {
		t.Fatal(err)
	}
	for where, s := range map[string]string{"session": string(b), "events": stdout, "request": string(srv.Requests()[1].Body)} {
		if strings.Contains(s, key) {
			t.Errorf("the key is in the %s", where)
		}
		if where != "events" && !strings.Contains(s, "the key is "+secrets.Mask) {
			t.Errorf("the %s lacks the masked result", where)
		}
	}
}

func mustJSON(t *testing.T, v map[string]string) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
