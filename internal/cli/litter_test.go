package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// An interactive start that exits without a prompt, and a start that fails
// after the session file was created (here: an MCP server that cannot be
// reached), leave no session file and name none to resume.
func TestNoSessionFileWithoutAPrompt(t *testing.T) {
	t.Run("interactive exit", func(t *testing.T) {
		c := newCLI(t, providertest.New(t))
		code, stdout, stderr := c.main("/exit\n")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if n := len(c.sessions()); n != 0 {
			t.Fatalf("%d session files", n)
		}
		if strings.Contains(stdout+stderr, "Resume:") {
			t.Errorf("a resume hint names a removed session: %q %q", stdout, stderr)
		}
	})
	t.Run("end of input", func(t *testing.T) {
		c := newCLI(t, providertest.New(t))
		if code, _, stderr := c.main(""); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if n := len(c.sessions()); n != 0 {
			t.Fatalf("%d session files", n)
		}
	})
	t.Run("failed start after the session file", func(t *testing.T) {
		c := newCLI(t, providertest.New(t))
		catalog := filepath.Join(t.TempDir(), "mcp.json")
		if err := os.WriteFile(catalog, []byte(`{"servers":{"docs":{"url":"http://127.0.0.1:1/mcp","allowedTools":["x"]}}}`), 0o600); err != nil {
			t.Fatal(err)
		}
		c.env["TINY_MCP_CONFIG"] = catalog
		code, _, stderr := c.main("", "--mcp", "docs")
		if code != 1 || !strings.Contains(stderr, "MCP docs: connecting: cannot connect") {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if n := len(c.sessions()); n != 0 {
			t.Fatalf("%d session files", n)
		}
	})
	t.Run("a prompt keeps the session", func(t *testing.T) {
		c := newCLI(t, providertest.New(t, providertest.Reply{Text: "hello"}))
		code, stdout, stderr := c.main("hi\n")
		if code != 0 || len(c.sessions()) != 1 || !strings.Contains(stdout+stderr, "Resume: tiny-go --session ") {
			t.Fatalf("exit %d, %d sessions: %q %q", code, len(c.sessions()), stdout, stderr)
		}
	})
}

// --continue passes by a session that holds only its header (left by an
// older tiny-go, or a crash before the first prompt).
func TestContinueSkipsHeaderOnlySessions(t *testing.T) {
	c := newCLI(t, providertest.New(t, providertest.Reply{Text: "first answer"}))
	if code, _, stderr := c.main("", "first prompt"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	real := c.state().Header.ID
	dir := filepath.Join(c.dir, ".tiny-agent", "sessions")
	empty := filepath.Join(dir, "2099-01-01T00-00-00-000Z_018f0000-0000-7000-8000-0000000000ee.jsonl")
	header := `{"createdAt":4070908800000,"cwd":"` + c.dir + `","environmentIdentity":"x","id":"018f0000-0000-7000-8000-0000000000ee","kind":"header","model":"m","provider":"openrouter","version":2}` + "\n"
	if err := os.WriteFile(empty, []byte(header), 0o600); err != nil {
		t.Fatal(err)
	}
	c.env["TINY_ENDPOINT"] = providertest.New(t, providertest.Reply{Text: "second answer"}).URL()
	code, stdout, stderr := c.main("", "--continue", "--json", "second prompt")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, real) || strings.Contains(stdout, "0000000000ee") {
		t.Errorf("--continue did not resume %s: %s", real, stdout)
	}
	c.env["TINY_ENDPOINT"] = providertest.New(t).URL()
	os.Remove(filepath.Join(dir, filepath.Base(c.sessionsExcept(empty))))
	if code, _, stderr := c.main("", "--continue", "third"); code == 0 || !strings.Contains(stderr, "no session in") {
		t.Errorf("with only a header-only session: exit %d, %q", code, stderr)
	}
}

// sessionsExcept is the one session file other than skip.
func (c *cliRun) sessionsExcept(skip string) string {
	for _, s := range c.sessions() {
		if s != skip {
			return s
		}
	}
	c.t.Fatal("no other session")
	return ""
}
