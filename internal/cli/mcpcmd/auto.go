package mcpcmd

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-json-experiment/json"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/config"
	"github.com/tiny-agent/tiny-go/internal/hooks"
	"github.com/tiny-agent/tiny-go/internal/mcp"
	"github.com/tiny-agent/tiny-go/internal/permissions"
)

// AutoServers are the servers a run without --mcp uses: every server
// of the catalog, except those of the project's .mcp.json that neither
// Claude Code's settings (enableAllProjectMcpServers,
// enabledMcpjsonServers, disabledMcpjsonServers) nor the user's answer
// trusts; canAsk says the user can be asked (an interactive run in the
// terminal). A catalog that cannot be read costs the run its servers, not
// its start: one line says why. auto is true when a catalog chose them.
func AutoServers(io IO, cwd string, canAsk bool) (servers []mcp.Server, auto bool) {
	c, ok, err := Catalog(io, cwd)
	if err != nil {
		fmt.Fprintf(io.Stderr, "%s: MCP servers are not used: %v\n", cmdutil.ProgramName, err)
		return nil, false
	}
	if !ok {
		return nil, false
	}
	var project, out []mcp.Server
	for _, s := range c.Servers {
		if strings.HasPrefix(s.Source, mcp.ScopeProject+": ") {
			project = append(project, s)
			continue
		}
		out = append(out, s)
	}
	if len(project) > 0 {
		out = append(out, trustedProjectServers(io, cwd, canAsk, project)...)
	}
	return out, true
}

// mcpTrust is what Claude Code's settings say of .mcp.json's servers.
type mcpTrust struct {
	EnableAll *bool    `json:"enableAllProjectMcpServers"`
	Enabled   []string `json:"enabledMcpjsonServers"`
	Disabled  []string `json:"disabledMcpjsonServers"`
}

// trustedProjectServers are the .mcp.json servers the settings or the
// user trust; the user is asked once per project and server list.
func trustedProjectServers(io IO, cwd string, canAsk bool, servers []mcp.Server) []mcp.Server {
	home := io.Getenv("HOME")
	t := readMCPTrust(permissions.Files(home, hooks.ProjectDir(cwd, home)))
	var undecided, out []mcp.Server
	for _, s := range servers {
		switch {
		case slices.Contains(t.Disabled, s.Alias):
		case (t.EnableAll != nil && *t.EnableAll) || slices.Contains(t.Enabled, s.Alias):
			out = append(out, s)
		default:
			undecided = append(undecided, s)
		}
	}
	if len(undecided) == 0 {
		return out
	}
	names := make([]string, len(undecided))
	for i, s := range undecided {
		names[i] = s.Alias
	}
	store := mcpTrustFile(io)
	key := trustKey(cwd, undecided)
	answer, known := trustAnswer(store, key)
	if !known {
		answer, known = askMCPTrust(io, canAsk, names)
		if known && store != "" {
			if err := saveTrustAnswer(store, key, answer); err != nil {
				fmt.Fprintf(io.Stderr, "%s: warning: the answer is not kept: %v\n", cmdutil.ProgramName, err)
			}
		}
	}
	switch {
	case answer:
		return append(out, undecided...)
	case !known:
		fmt.Fprintf(io.Stderr, "%s: MCP servers of .mcp.json not started until you trust them: %s (answer once in an interactive run, pass --mcp, or set enableAllProjectMcpServers or enabledMcpjsonServers in .claude/settings.local.json)\n",
			cmdutil.ProgramName, strings.Join(names, ", "))
	}
	return out
}

func readMCPTrust(files []string) mcpTrust {
	var t mcpTrust
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var one mcpTrust
		if json.Unmarshal(data, &one, json.RejectUnknownMembers(false)) != nil {
			continue
		}
		if one.EnableAll != nil {
			t.EnableAll = one.EnableAll
		}
		t.Enabled = append(t.Enabled, one.Enabled...)
		t.Disabled = append(t.Disabled, one.Disabled...)
	}
	return t
}

// askMCPTrust asks, in an interactive run, whether to start the project's
// servers; known is false where nobody can answer (!canAsk).
func askMCPTrust(io IO, canAsk bool, names []string) (trust, known bool) {
	if !canAsk {
		return false, false
	}
	fmt.Fprintf(io.Stderr, "This project's .mcp.json starts MCP servers: %s. They run programs or reach services on your behalf.\nStart them in this project? [y/N] ", strings.Join(names, ", "))
	line, err := bufio.NewReader(oneByteReader{io.Stdin}).ReadString('\n')
	if err != nil && line == "" {
		return false, false
	}
	ans := strings.ToLower(strings.TrimSpace(line))
	return ans == "y" || ans == "yes", true
}

// oneByteReader reads stdin a byte at a time, so the answer's line is all
// that is taken from it: the rest is the session's input.
type oneByteReader struct {
	r interface{ Read([]byte) (int, error) }
}

func (o oneByteReader) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:1]
	}
	return o.r.Read(p)
}

// mcpTrustFile keeps the answers in the user's configuration directory,
// never in the project (which could ship its own); "" when there is none.
func mcpTrustFile(io IO) string {
	user := config.UserFile(io.Getenv)
	if user == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(user), "mcp-trust.json")
}

// trustKey names a project and its server list: a changed .mcp.json is
// asked about again.
func trustKey(cwd string, servers []mcp.Server) string {
	h := sha256.New()
	for _, s := range servers {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%q\x00", s.Alias, s.Endpoint, s.Command, s.Args)
	}
	return cwd + " " + hex.EncodeToString(h.Sum(nil)[:12])
}

func trustAnswer(file, key string) (trust, known bool) {
	if file == "" {
		return false, false
	}
	m := map[string]bool{}
	data, err := os.ReadFile(file)
	if err != nil || json.Unmarshal(data, &m) != nil {
		return false, false
	}
	trust, known = m[key]
	return trust, known
}

func saveTrustAnswer(file, key string, trust bool) error {
	m := map[string]bool{}
	data, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if len(data) > 0 {
		_ = json.Unmarshal(data, &m)
	}
	m[key] = trust
	out, err := json.Marshal(m, json.Deterministic(true))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, append(out, '\n'), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}
