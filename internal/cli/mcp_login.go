package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/tiny-agent/tiny-go/internal/config"
	"github.com/tiny-agent/tiny-go/internal/mcp"
	"github.com/tiny-agent/tiny-go/internal/oauth"
)

// mcpOAuth is where MCP sign-ins are kept (the user's config directory)
// and how the browser is shown; nil without a home directory.
func mcpOAuth(io stdio, interactive bool) *mcp.OAuthOptions {
	user := config.UserFile(io.getenv)
	if user == "" {
		return nil
	}
	return &mcp.OAuthOptions{
		Store:       &oauth.Store{Dir: oauth.StoreDir(filepath.Dir(user))},
		Interactive: interactive,
		Browser:     oauth.SystemBrowser(io.getenv, func(line string) { fmt.Fprintln(io.stderr, line) }),
	}
}

func newMCPLoginCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "login NAME",
		Short: "Sign in to a remote MCP server with OAuth (opens $BROWSER or prints the URL) and store its token",
		Args:  exactArgs(1, "the server's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			io, cwd, err := a.settingsHere(cmd)
			if err != nil {
				return err
			}
			s, err := mcpServerNamed(io, cwd, args[0])
			if err != nil {
				return err
			}
			ctx, stop := interruptible(cmdContext(cmd))
			defer stop()
			o := mcpOAuth(io, true)
			if o == nil {
				return usageErrorf("neither HOME nor XDG_CONFIG_HOME is set: there is nowhere to keep the token")
			}
			before, _ := o.Store.Load(s.Endpoint)
			opts := mcpOptions(cwd, io, []mcp.Server{s}, nil, nil, nil)
			opts.OAuth = o
			c, err := mcp.Connect(ctx, s, opts)
			if err != nil {
				return err
			}
			defer c.Close()
			after, _ := o.Store.Load(s.Endpoint)
			switch {
			case s.OAuth != nil && s.OAuth.Grant == oauth.GrantClientCredentials:
				fmt.Fprintf(io.stdout, "MCP %s: signed in with client credentials (a token is requested on each run)\n", s.Alias)
			case after != nil && (before == nil || after.AccessToken != before.AccessToken):
				fmt.Fprintf(io.stdout, "MCP %s: signed in; the token is stored in %s\n", s.Alias, o.Store.Path(s.Endpoint))
			default:
				fmt.Fprintf(io.stdout, "MCP %s: the server did not ask to sign in (%s)\n", s.Alias, c.StartupLine())
			}
			return nil
		},
	}
}

func newMCPLogoutCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "logout NAME",
		Short: "Forget the stored OAuth token of a remote MCP server",
		Args:  exactArgs(1, "the server's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			io, cwd, err := a.settingsHere(cmd)
			if err != nil {
				return err
			}
			s, err := mcpServerNamed(io, cwd, args[0])
			if err != nil {
				return err
			}
			o := mcpOAuth(io, false)
			if o == nil {
				return usageErrorf("neither HOME nor XDG_CONFIG_HOME is set: no token is stored")
			}
			found, err := o.Store.Delete(s.Endpoint)
			if err != nil {
				return err
			}
			if !found {
				fmt.Fprintf(io.stdout, "MCP %s: not signed in\n", s.Alias)
				return nil
			}
			fmt.Fprintf(io.stdout, "MCP %s: signed out (removed %s)\n", s.Alias, o.Store.Path(s.Endpoint))
			return nil
		},
	}
}

// mcpServerNamed is one remote server of the catalog in effect.
func mcpServerNamed(io stdio, cwd, name string) (mcp.Server, error) {
	c, ok, err := mcpCatalog(io, cwd)
	if err != nil {
		return mcp.Server{}, err
	}
	if !ok {
		return mcp.Server{}, usageError{Err: errNoMCPServers}
	}
	servers, err := mcp.Select(c, []string{name})
	if err != nil {
		return mcp.Server{}, usageError{Err: err}
	}
	if servers[0].Transport() != mcp.TransportHTTP {
		return mcp.Server{}, usageErrorf("MCP %s is a %s server: only Streamable HTTP servers sign in with OAuth", name, servers[0].Transport())
	}
	return servers[0], nil
}
