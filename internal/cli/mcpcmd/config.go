package mcpcmd

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/mcp"
)

// addFlags are the flags of `tiny-go mcp add`, as `claude mcp add` has them.
type addFlags struct {
	transport, scope string
	env, headers     []string
	clientID         string
	clientSecretEnv  string
	callbackPort     int
}

func newAddCommand(f *cmdutil.Factory) *cobra.Command {
	var fl addFlags
	cmd := &cobra.Command{
		Use:   "add [flags] NAME COMMAND_OR_URL [ARGS...]",
		Short: "Add an MCP server to .tiny-agent/mcp.json (local), .mcp.json (project) or the user's mcp.json",
		Example: `  tiny-go mcp add fs -- npx -y @modelcontextprotocol/server-filesystem .
  tiny-go mcp add --transport http docs https://mcp.example.com/mcp
  tiny-go mcp add --transport http -H "X-Api-Key: ${DOCS_KEY}" --scope project docs https://mcp.example.com/mcp
  tiny-go mcp add -e GITHUB_TOKEN='${GITHUB_TOKEN}' --scope user github -- github-mcp-server stdio`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) < 2 {
				return cmdutil.UsageErrorf("mcp add needs a name and the server's command or URL, e.g. tiny-go mcp add fs -- npx -y @modelcontextprotocol/server-filesystem . (more: tiny-go mcp add --help)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			io, cwd, err := here(f, cmd)
			if err != nil {
				return err
			}
			return add(io, cwd, fl, args)
		},
	}
	flags := cmd.Flags()
	flags.StringVarP(&fl.transport, "transport", "t", "stdio", "stdio, http or sse")
	flags.StringVarP(&fl.scope, "scope", "s", mcp.ScopeLocal, "local (this project, you), project (.mcp.json, shared) or user (every project)")
	flags.StringArrayVarP(&fl.env, "env", "e", nil, "KEY=value for a stdio server (repeatable; ${VAR} is expanded when it starts)")
	flags.StringArrayVarP(&fl.headers, "header", "H", nil, `"Name: value" sent to an http/sse server (repeatable)`)
	flags.StringVar(&fl.clientID, "client-id", "", "OAuth client ID registered for tiny-go at the server (used where the server offers no client registration)")
	flags.StringVar(&fl.clientSecretEnv, "client-secret-env", "", "variable holding the OAuth client secret (stored as ${VAR}, never the value)")
	flags.IntVar(&fl.callbackPort, "callback-port", 0, "fixed port of the OAuth loopback redirect")
	return cmd
}

func add(io IO, cwd string, f addFlags, args []string) error {
	name, target := args[0], args[1]
	e := mcp.Entry{Type: f.transport}
	switch f.transport {
	case mcp.TransportStdio:
		if len(f.headers) > 0 || f.clientID != "" {
			return cmdutil.UsageErrorf("--header and --client-id are for an http or sse server")
		}
		e.Command, e.Args = target, args[2:]
		for _, kv := range f.env {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return cmdutil.UsageErrorf("-e %q: want KEY=value", kv)
			}
			if e.Env == nil {
				e.Env = map[string]string{}
			}
			e.Env[k] = v
		}
	case mcp.TransportHTTP, mcp.TransportSSE:
		if len(args) > 2 || len(f.env) > 0 {
			return cmdutil.UsageErrorf("an %s server takes one URL and no -e; arguments and variables are for a stdio server", f.transport)
		}
		e.URL = target
		for _, h := range f.headers {
			k, v, ok := strings.Cut(h, ":")
			if !ok || strings.TrimSpace(k) == "" {
				return cmdutil.UsageErrorf("-H %q: want \"Name: value\"", h)
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
		return cmdutil.UsageErrorf("--transport must be stdio, http or sse")
	}
	path, ok := scopeFiles(io, cwd)[f.scope]
	if !ok {
		return cmdutil.UsageErrorf("--scope must be local, project or user")
	}
	mode := os.FileMode(0o600) // it may hold a secret given with -e or -H
	if f.scope == mcp.ScopeProject {
		mode = 0o644 // shared through the repository
	}
	if err := mcp.AddServer(path, name, e, mode); err != nil {
		return cmdutil.UsageErrorf("MCP server %s: %v", name, err)
	}
	fmt.Fprintf(io.Stdout, "Added %s MCP server %s to %s (%s)\n", f.transport, name, path, f.scope)
	return nil
}

func newRemoveCommand(f *cmdutil.Factory) *cobra.Command {
	var scope string
	cmd := &cobra.Command{
		Use:   "remove [--scope local|project|user] NAME",
		Short: "Remove an MCP server from the file that defines it",
		Args:  cmdutil.ExactArgs(1, "the server's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			io, cwd, err := here(f, cmd)
			if err != nil {
				return err
			}
			return remove(io, cwd, scope, args[0])
		},
	}
	cmd.Flags().StringVarP(&scope, "scope", "s", "", "the scope to remove it from when several define it")
	return cmd
}

func remove(io IO, cwd, scope, name string) error {
	files := scopeFiles(io, cwd)
	var in []string
	for _, sc := range []string{mcp.ScopeLocal, mcp.ScopeProject, mcp.ScopeUser} {
		if files[sc] != "" && (scope == "" || scope == sc) && mcp.Defines(files[sc], name) {
			in = append(in, sc)
		}
	}
	switch {
	case scope != "" && files[scope] == "":
		return cmdutil.UsageErrorf("--scope must be local, project or user")
	case len(in) == 0:
		return cmdutil.UsageErrorf("no MCP server %s in the local, project or user files (one in $%s or [mcp_servers] is edited there)", name, mcp.ConfigEnv)
	case len(in) > 1:
		return cmdutil.UsageErrorf("MCP server %s is defined in several scopes (%s): say which with --scope", name, strings.Join(in, ", "))
	}
	if _, err := mcp.RemoveServer(files[in[0]], name); err != nil {
		return fmt.Errorf("MCP server %s: %w", name, err)
	}
	fmt.Fprintf(io.Stdout, "Removed MCP server %s from %s (%s)\n", name, files[in[0]], in[0])
	return nil
}
