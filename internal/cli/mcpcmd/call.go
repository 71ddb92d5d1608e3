package mcpcmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/cobra"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/mcp"
	"github.com/tiny-agent/tiny-go/internal/sandbox"
)

// newCallCommand is `tiny-go mcp call NAME [TOOL [JSON]]`: one server's
// tools, or one call of one, through the same client a run uses (offered
// tools only, its sign-in, its elicitation) but without a model or a
// session. For trying a server out.
func newCallCommand(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "call NAME [TOOL [JSON-ARGUMENTS]]",
		Short: "Connect to one MCP server and list its offered tools, or call one of them",
		Example: `  tiny-go mcp call fs
  tiny-go mcp call fs read_text_file '{"path":"README.md"}'`,
		Args: cobra.RangeArgs(1, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			io, cwd, err := here(f, cmd)
			if err != nil {
				return err
			}
			ctx, stop := cmdutil.Interruptible(cmdContext(cmd))
			defer stop()
			c, ok, err := Catalog(io, cwd)
			if err != nil {
				return err
			}
			if !ok {
				return cmdutil.UsageError{Err: errNoServers}
			}
			servers, err := mcp.Select(c, args[:1])
			if err != nil {
				return cmdutil.UsageError{Err: err}
			}
			sb, warning, err := sandbox.New(sandbox.Policy{Mode: sandbox.Workspace, WorkDir: cwd, Getenv: io.Getenv})
			if err != nil {
				return err
			}
			defer sb.Close()
			if warning != "" {
				fmt.Fprintln(io.Stderr, warning)
			}
			client, err := mcp.Connect(ctx, servers[0], Options(cwd, io, servers, sb, nil, nil))
			if err != nil {
				return err
			}
			defer client.Close()
			if len(args) == 1 {
				fmt.Fprintln(io.Stderr, client.StartupLine())
				for _, t := range client.Tools() {
					fmt.Fprintln(io.Stdout, strings.TrimPrefix(t.Definition().Display, "mcp:"+servers[0].Alias+"/"))
				}
				return nil
			}
			return callTool(ctx, io, client, args[1:])
		},
	}
}

func callTool(ctx context.Context, io IO, client *mcp.Client, args []string) error {
	input := jsontext.Value("{}")
	if len(args) == 2 {
		input = jsontext.Value(args[1])
		if !input.IsValid() {
			return cmdutil.UsageErrorf("the arguments are not valid JSON")
		}
	}
	for _, t := range client.Tools() {
		if strings.TrimPrefix(t.Definition().Display, "mcp:"+client.Alias()+"/") != args[0] {
			continue
		}
		res := t.Run(ctx, input)
		fmt.Fprintln(io.Stdout, res.Content)
		if res.IsError {
			return cmdutil.ExitError{Code: cmdutil.ExitFailed}
		}
		return nil
	}
	return cmdutil.UsageErrorf("MCP %s offers no tool %s", client.Alias(), args[0])
}
