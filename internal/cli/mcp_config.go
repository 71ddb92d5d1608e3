package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tiny-agent/tiny-go/internal/config"
	"github.com/tiny-agent/tiny-go/internal/mcp"
)

// errNoMCPServers is what --mcp and `mcp list` say when nothing defines a
// server.
var errNoMCPServers = errors.New("no MCP servers are configured: add one with `tiny-go mcp add NAME -- COMMAND [ARGS...]` or `tiny-go mcp add --transport http NAME URL`, write .mcp.json, or set TINY_MCP_CONFIG (see docs/mcp.md)")

// mcpScopeFiles are the MCP configuration files of cwd by scope.
func mcpScopeFiles(io stdio, cwd string) map[string]string {
	root := filepath.Dir(filepath.Dir(config.ProjectFile(cwd)))
	files := map[string]string{
		mcp.ScopeLocal:   filepath.Join(root, config.ProjectDir, "mcp.json"),
		mcp.ScopeProject: filepath.Join(root, ".mcp.json"),
	}
	if user := config.UserFile(io.getenv); user != "" {
		files[mcp.ScopeUser] = filepath.Join(filepath.Dir(user), "mcp.json")
	}
	return files
}

// mcpCatalog is the MCP catalog in effect, merged by precedence: the file
// of $TINY_MCP_CONFIG, the local file, the project's .mcp.json, the
// settings files' [mcp_servers], the user's file. ok is false when none
// defines a server.
func mcpCatalog(io stdio, cwd string) (c mcp.Catalog, ok bool, err error) {
	files := mcpScopeFiles(io, cwd)
	var high []mcp.SourceFile
	if path := io.getenv(mcp.ConfigEnv); path != "" {
		high = append(high, mcp.SourceFile{Scope: mcp.ScopeEnv, Path: path})
	}
	high = append(high, mcp.SourceFile{Scope: mcp.ScopeLocal, Path: files[mcp.ScopeLocal]}, mcp.SourceFile{Scope: mcp.ScopeProject, Path: files[mcp.ScopeProject]})
	if c, err = mcp.LoadSources(high, io.lookupEnv); err != nil {
		return mcp.Catalog{}, true, err
	}
	settings, err := settingsMCPCatalog(io)
	if err != nil {
		return mcp.Catalog{}, true, err
	}
	c = c.Merge(settings)
	if user := files[mcp.ScopeUser]; user != "" {
		u, err := mcp.LoadSources([]mcp.SourceFile{{Scope: mcp.ScopeUser, Path: user}}, io.lookupEnv)
		if err != nil {
			return mcp.Catalog{}, true, err
		}
		c = c.Merge(u)
	}
	return c, len(c.Servers) > 0 || io.getenv(mcp.ConfigEnv) != "", nil
}

// mcpAddFlags are the flags of `tiny-go mcp add`, as `claude mcp add` has them.
type mcpAddFlags struct {
	transport, scope string
	env, headers     []string
	clientID         string
	clientSecretEnv  string
	callbackPort     int
}

func newMCPAddCommand(a *app) *cobra.Command {
	var f mcpAddFlags
	cmd := &cobra.Command{
		Use:   "add [flags] NAME COMMAND_OR_URL [ARGS...]",
		Short: "Add an MCP server to .tiny-agent/mcp.json (local), .mcp.json (project) or the user's mcp.json",
		Example: `  tiny-go mcp add fs -- npx -y @modelcontextprotocol/server-filesystem .
  tiny-go mcp add --transport http docs https://mcp.example.com/mcp
  tiny-go mcp add --transport http -H "X-Api-Key: ${DOCS_KEY}" --scope project docs https://mcp.example.com/mcp
  tiny-go mcp add -e GITHUB_TOKEN='${GITHUB_TOKEN}' --scope user github -- github-mcp-server stdio`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 2 {
				return usageErrorf("mcp add needs a name and the server's command or URL, e.g. tiny-go mcp add fs -- npx -y @modelcontextprotocol/server-filesystem . (more: tiny-go mcp add --help)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			io, cwd, err := a.settingsHere(cmd)
			if err != nil {
				return err
			}
			return mcpAdd(io, cwd, f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.transport, "transport", "t", "stdio", "stdio, http or sse")
	fl.StringVarP(&f.scope, "scope", "s", mcp.ScopeLocal, "local (this project, you), project (.mcp.json, shared) or user (every project)")
	fl.StringArrayVarP(&f.env, "env", "e", nil, "KEY=value for a stdio server (repeatable; ${VAR} is expanded when it starts)")
	fl.StringArrayVarP(&f.headers, "header", "H", nil, `"Name: value" sent to an http/sse server (repeatable)`)
	fl.StringVar(&f.clientID, "client-id", "", "OAuth client ID registered for tiny-go at the server (used where the server offers no client registration)")
	fl.StringVar(&f.clientSecretEnv, "client-secret-env", "", "variable holding the OAuth client secret (stored as ${VAR}, never the value)")
	fl.IntVar(&f.callbackPort, "callback-port", 0, "fixed port of the OAuth loopback redirect")
	return cmd
}

func mcpAdd(io stdio, cwd string, f mcpAddFlags, args []string) error {
	name, target := args[0], args[1]
	e := mcp.Entry{Type: f.transport}
	switch f.transport {
	case mcp.TransportStdio:
		if len(f.headers) > 0 || f.clientID != "" {
			return usageErrorf("--header and --client-id are for an http or sse server")
		}
		e.Command, e.Args = target, args[2:]
		for _, kv := range f.env {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return usageErrorf("-e %q: want KEY=value", kv)
			}
			if e.Env == nil {
				e.Env = map[string]string{}
			}
			e.Env[k] = v
		}
	case mcp.TransportHTTP, mcp.TransportSSE:
		if len(args) > 2 || len(f.env) > 0 {
			return usageErrorf("an %s server takes one URL and no -e; arguments and variables are for a stdio server", f.transport)
		}
		e.URL = target
		for _, h := range f.headers {
			k, v, ok := strings.Cut(h, ":")
			if !ok || strings.TrimSpace(k) == "" {
				return usageErrorf("-H %q: want \"Name: value\"", h)
			}
			if e.Headers == nil {
				e.Headers = map[string]string{}
			}
			e.Headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
		if f.clientID != "" || f.callbackPort != 0 {
			e.OAuth = &mcp.OAuthConfig{ClientID: f.clientID, CallbackPort: f.callbackPort}
			if f.clientSecretEnv != "" {
				e.OAuth.ClientSecret = "${" + f.clientSecretEnv + "}"
			}
		}
	default:
		return usageErrorf("--transport must be stdio, http or sse")
	}
	path, ok := mcpScopeFiles(io, cwd)[f.scope]
	if !ok {
		return usageErrorf("--scope must be local, project or user")
	}
	mode := os.FileMode(0o600) // it may hold a secret given with -e or -H
	if f.scope == mcp.ScopeProject {
		mode = 0o644 // shared through the repository
	}
	if err := mcp.AddServer(path, name, e, mode); err != nil {
		return usageErrorf("MCP server %s: %v", name, err)
	}
	fmt.Fprintf(io.stdout, "Added %s MCP server %s to %s (%s)\n", f.transport, name, path, f.scope)
	return nil
}

func newMCPRemoveCommand(a *app) *cobra.Command {
	var scope string
	cmd := &cobra.Command{
		Use:   "remove [--scope local|project|user] NAME",
		Short: "Remove an MCP server from the file that defines it",
		Args:  exactArgs(1, "the server's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			io, cwd, err := a.settingsHere(cmd)
			if err != nil {
				return err
			}
			return mcpRemove(io, cwd, scope, args[0])
		},
	}
	cmd.Flags().StringVarP(&scope, "scope", "s", "", "the scope to remove it from when several define it")
	return cmd
}

func mcpRemove(io stdio, cwd, scope, name string) error {
	files := mcpScopeFiles(io, cwd)
	var in []string
	for _, sc := range []string{mcp.ScopeLocal, mcp.ScopeProject, mcp.ScopeUser} {
		if files[sc] != "" && (scope == "" || scope == sc) && mcp.Defines(files[sc], name) {
			in = append(in, sc)
		}
	}
	switch {
	case scope != "" && files[scope] == "":
		return usageErrorf("--scope must be local, project or user")
	case len(in) == 0:
		return usageErrorf("no MCP server %s in the local, project or user files (one in $%s or [mcp_servers] is edited there)", name, mcp.ConfigEnv)
	case len(in) > 1:
		return usageErrorf("MCP server %s is defined in several scopes (%s): say which with --scope", name, strings.Join(in, ", "))
	}
	if _, err := mcp.RemoveServer(files[in[0]], name); err != nil {
		return fmt.Errorf("MCP server %s: %w", name, err)
	}
	fmt.Fprintf(io.stdout, "Removed MCP server %s from %s (%s)\n", name, files[in[0]], in[0])
	return nil
}
