package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/cobra"

	"github.com/tiny-agent/tiny-go/internal/mcp"
	"github.com/tiny-agent/tiny-go/internal/sandbox"
)

// newMCPCallCommand is `tiny-go mcp call NAME [TOOL [JSON]]`: one server's
// tools, or one call of one, through the same client a run uses (offered
// tools only, its sign-in, its elicitation) but without a model or a
// session. For trying a server out.
func newMCPCallCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "call NAME [TOOL [JSON-ARGUMENTS]]",
		Short: "Connect to one MCP server and list its offered tools, or call one of them",
		Example: `  tiny-go mcp call fs
  tiny-go mcp call fs read_text_file '{"path":"README.md"}'`,
		Args: cobra.RangeArgs(1, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			io, cwd, err := a.settingsHere(cmd)
			if err != nil {
				return err
			}
			ctx, stop := interruptible(cmdContext(cmd))
			defer stop()
			c, ok, err := mcpCatalog(io, cwd)
			if err != nil {
				return err
			}
			if !ok {
				return usageError{Err: errNoMCPServers}
			}
			servers, err := mcp.Select(c, args[:1])
			if err != nil {
				return usageError{Err: err}
			}
			sb, warning, err := sandbox.New(sandbox.Policy{Mode: sandbox.Workspace, WorkDir: cwd, Getenv: io.getenv})
			if err != nil {
				return err
			}
			defer sb.Close()
			if warning != "" {
				fmt.Fprintln(io.stderr, warning)
			}
			client, err := mcp.Connect(ctx, servers[0], mcpOptions(cwd, io, servers, sb, nil, nil))
			if err != nil {
				return err
			}
			defer client.Close()
			if len(args) == 1 {
				fmt.Fprintln(io.stderr, client.StartupLine())
				for _, t := range client.Tools() {
					fmt.Fprintln(io.stdout, strings.TrimPrefix(t.Definition().Display, "mcp:"+servers[0].Alias+"/"))
				}
				return nil
			}
			return mcpCallTool(ctx, io, client, args[1:])
		},
	}
}

func mcpCallTool(ctx context.Context, io stdio, client *mcp.Client, args []string) error {
	input := jsontext.Value("{}")
	if len(args) == 2 {
		input = jsontext.Value(args[1])
		if !input.IsValid() {
			return usageErrorf("the arguments are not valid JSON")
		}
	}
	for _, t := range client.Tools() {
		if strings.TrimPrefix(t.Definition().Display, "mcp:"+client.Alias()+"/") != args[0] {
			continue
		}
		res := t.Run(ctx, input)
		fmt.Fprintln(io.stdout, res.Content)
		if res.IsError {
			return exitError{Code: exitFailed}
		}
		return nil
	}
	return usageErrorf("MCP %s offers no tool %s", client.Alias(), args[0])
}
