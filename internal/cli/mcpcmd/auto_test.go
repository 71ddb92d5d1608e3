package mcpcmd

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/mcp"
)

// autoServers is AutoServers in the project with stdin, the aliases it
// chose and what it printed.
func (p *project) autoServers(canAsk bool, stdin io.Reader) (aliases []string, auto bool, stderr string) {
	var errb bytes.Buffer
	servers, auto := AutoServers(IO{Stdin: stdin, Stdout: io.Discard, Stderr: &errb, Getenv: p.getenv}, p.dir, canAsk)
	for _, s := range servers {
		aliases = append(aliases, s.Alias)
	}
	return aliases, auto, errb.String()
}

// Without --mcp a run takes the local servers, and those of the
// project's .mcp.json only once the user trusts them: where nobody can be
// asked they are left out with one line saying how to trust them; the
// answer of an interactive run takes one line of stdin, is kept in the
// user's configuration directory, and holds until .mcp.json changes.
func TestAutoServersTrustTheProjectsServersOnce(t *testing.T) {
	p := newProject(t)
	p.env["XDG_CONFIG_HOME"] = filepath.Join(t.TempDir(), "config")
	if aliases, auto, stderr := p.autoServers(false, nil); aliases != nil || auto || stderr != "" {
		t.Fatalf("no catalog: %q %v %q", aliases, auto, stderr)
	}
	p.write(".mcp.json", `{"mcpServers":{"proj":{"command":"proj-server"}}}`)
	if code, _, stderr := p.mcp("add", "mine", "--", "my-server"); code != 0 {
		t.Fatalf("add: %s", stderr)
	}
	aliases, auto, stderr := p.autoServers(false, nil)
	if strings.Join(aliases, ",") != "mine" || !auto || !strings.Contains(stderr, "MCP servers of .mcp.json not started until you trust them: proj (") {
		t.Fatalf("nobody to ask: %q %v %q", aliases, auto, stderr)
	}

	stdin := strings.NewReader("y\nthe session's input")
	aliases, _, stderr = p.autoServers(true, stdin)
	if strings.Join(aliases, ",") != "mine,proj" || !strings.Contains(stderr, "starts MCP servers: proj.") {
		t.Fatalf("answered yes: %q %q", aliases, stderr)
	}
	if rest, _ := io.ReadAll(stdin); string(rest) != "the session's input" {
		t.Errorf("the answer took more than its line: %q is left", rest)
	}
	if aliases, _, stderr = p.autoServers(false, nil); strings.Join(aliases, ",") != "mine,proj" || stderr != "" {
		t.Errorf("the answer is not kept: %q %q", aliases, stderr)
	}

	p.write(".mcp.json", `{"mcpServers":{"proj":{"command":"other-server"}}}`)
	if aliases, _, _ = p.autoServers(false, nil); strings.Join(aliases, ",") != "mine" {
		t.Errorf("a changed .mcp.json is trusted without asking: %q", aliases)
	}
	p.write(".claude/settings.local.json", `{"enabledMcpjsonServers":["proj"]}`)
	if aliases, _, stderr = p.autoServers(false, nil); strings.Join(aliases, ",") != "mine,proj" || stderr != "" {
		t.Errorf("enabledMcpjsonServers: %q %q", aliases, stderr)
	}

	p.write(".mcp.json", `{`)
	if aliases, auto, stderr = p.autoServers(false, nil); aliases != nil || auto || !strings.HasPrefix(stderr, "tiny-go: MCP servers are not used: ") {
		t.Errorf("unreadable catalog: %q %v %q", aliases, auto, stderr)
	}
}

// --mcp picks from the catalog in effect; without it nothing is read.
func TestSelect(t *testing.T) {
	p := newProject(t)
	io := IO{Getenv: p.getenv}
	p.write(".mcp.json", `{`)
	if servers, err := Select(nil, io, p.dir); servers != nil || err != nil {
		t.Fatalf("without --mcp: %v %v", servers, err)
	}
	p.write(".mcp.json", `{"mcpServers":{"a":{"command":"a-server"},"b":{"url":"http://127.0.0.1:1/mcp"}}}`)
	servers, err := Select([]string{"b"}, io, p.dir)
	if err != nil || len(servers) != 1 || servers[0].Alias != "b" || servers[0].Transport() != mcp.TransportHTTP {
		t.Fatalf("--mcp b: %v %v", servers, err)
	}
	if _, err := Select([]string{"c"}, io, p.dir); err == nil {
		t.Error("--mcp c: no error for a server the catalog lacks")
	}
	empty := newProject(t)
	if _, err := Select([]string{"a"}, IO{Getenv: empty.getenv}, empty.dir); err != errNoServers {
		t.Errorf("no catalog: %v", err)
	}
}
