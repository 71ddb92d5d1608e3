package mcpcmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/mcp"
	"github.com/tiny-agent/tiny-go/internal/oauth"
)

func newLoginCommand(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "login NAME",
		Short: "Sign in to a remote MCP server with OAuth (opens $BROWSER or prints the URL) and store its token",
		Args:  cmdutil.ExactArgs(1, "the server's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			io, cwd, err := here(f, cmd)
			if err != nil {
				return err
			}
			s, err := serverNamed(io, cwd, args[0])
			if err != nil {
				return err
			}
			ctx, stop := cmdutil.Interruptible(cmdContext(cmd))
			defer stop()
			o := oauthOptions(io, true)
			if o == nil {
				return cmdutil.UsageErrorf("neither HOME nor XDG_CONFIG_HOME is set: there is nowhere to keep the token")
			}
			before, _ := o.Store.Load(s.Endpoint)
			opts := Options(cwd, io, []mcp.Server{s}, nil, nil, nil)
			opts.OAuth = o
			c, err := mcp.Connect(ctx, s, opts)
			if err != nil {
				return err
			}
			defer c.Close()
			after, _ := o.Store.Load(s.Endpoint)
			switch {
			case s.OAuth != nil && s.OAuth.Grant == oauth.GrantClientCredentials:
				fmt.Fprintf(io.Stdout, "MCP %s: signed in with client credentials (a token is requested on each run)\n", s.Alias)
			case after != nil && (before == nil || after.AccessToken != before.AccessToken):
				fmt.Fprintf(io.Stdout, "MCP %s: signed in; the token is stored in %s\n", s.Alias, o.Store.Path(s.Endpoint))
			default:
				fmt.Fprintf(io.Stdout, "MCP %s: the server did not ask to sign in (%s)\n", s.Alias, c.StartupLine())
			}
			return nil
		},
	}
}

func newLogoutCommand(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "logout NAME",
		Short: "Forget the stored OAuth token of a remote MCP server",
		Args:  cmdutil.ExactArgs(1, "the server's name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			io, cwd, err := here(f, cmd)
			if err != nil {
				return err
			}
			s, err := serverNamed(io, cwd, args[0])
			if err != nil {
				return err
			}
			o := oauthOptions(io, false)
			if o == nil {
				return cmdutil.UsageErrorf("neither HOME nor XDG_CONFIG_HOME is set: no token is stored")
			}
			found, err := o.Store.Delete(s.Endpoint)
			if err != nil {
				return err
			}
			if !found {
				fmt.Fprintf(io.Stdout, "MCP %s: not signed in\n", s.Alias)
				return nil
			}
			fmt.Fprintf(io.Stdout, "MCP %s: signed out (removed %s)\n", s.Alias, o.Store.Path(s.Endpoint))
			return nil
		},
	}
}

// serverNamed is one remote server of the catalog in effect.
func serverNamed(io IO, cwd, name string) (mcp.Server, error) {
	c, ok, err := Catalog(io, cwd)
	if err != nil {
		return mcp.Server{}, err
	}
	if !ok {
		return mcp.Server{}, cmdutil.UsageError{Err: errNoServers}
	}
	servers, err := mcp.Select(c, []string{name})
	if err != nil {
		return mcp.Server{}, cmdutil.UsageError{Err: err}
	}
	if servers[0].Transport() != mcp.TransportHTTP {
		return mcp.Server{}, cmdutil.UsageErrorf("MCP %s is a %s server: only Streamable HTTP servers sign in with OAuth", name, servers[0].Transport())
	}
	return servers[0], nil
}
