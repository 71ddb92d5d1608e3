// Package mcpcmd is `tiny-go mcp …` (list, add, remove, login, logout,
// call) and the MCP configuration every run reads: the catalog in effect
// by scope, the servers a run starts (--mcp, or those trusted without it)
// and the options of their connections.
package mcpcmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/cobra"

	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/mcp"
	"github.com/tiny-agent/tiny-go/internal/sandbox"
)

// NewCommand is `tiny-go mcp` and its commands; the caller makes it a
// group (run alone it names its commands).
func NewCommand(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Manage MCP servers: list (connect and check), add, remove, login, logout",
	}
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "Connect to every configured server and show its transport, result, protocol, tools and source file",
		Example: `  tiny-go mcp list
  tiny-go mcp list --json`,
		Args: cmdutil.ExactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			io, cwd, err := here(f, cmd)
			if err != nil {
				return err
			}
			ctx, stop := cmdutil.Interruptible(cmdContext(cmd))
			defer stop()
			return listServers(ctx, io, cwd, asJSON)
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	cmd.AddCommand(list, newAddCommand(f), newRemoveCommand(f), newLoginCommand(f), newLogoutCommand(f), newCallCommand(f))
	return cmd
}

func cmdContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// listEntry is one server of `mcp list --json`.
type listEntry struct {
	Alias        string   `json:"alias"`
	Transport    string   `json:"transport"`
	Endpoint     string   `json:"endpoint,omitzero"`
	Command      string   `json:"command,omitzero"`
	Args         []string `json:"args,omitzero"`
	Status       string   `json:"status"` // "connected" or "failed"
	Protocol     string   `json:"protocol,omitzero"`
	AllowedTools []string `json:"allowedTools,omitzero"` // absent: every tool
	// Tools are the offered tools of a connected server.
	Tools  []string   `json:"tools,omitzero"`
	Source string     `json:"source"`
	Error  *listError `json:"error,omitzero"`
}

type listError struct {
	Type    string `json:"type"` // timeout or connection_failed
	Message string `json:"message"`
}

// listServers connects to every catalog server at once and reports each; it
// fails (exit 1) when any server does.
func listServers(ctx context.Context, io IO, cwd string, asJSON bool) error {
	catalog, ok, err := Catalog(io, cwd)
	if err != nil {
		return err
	}
	if !ok {
		return cmdutil.UsageError{Err: errNoServers}
	}
	// What a killed tiny-go left running here is stopped first; the
	// servers started now are recorded like a run's commands.
	tr, err := cmdutil.TrackProcesses(cwd, io.Stderr)
	if err != nil {
		return err
	}
	defer tr.Close()
	// The servers run confined as in a run with the default --sandbox.
	sb, warning, err := sandbox.New(sandbox.Policy{Mode: sandbox.Workspace, WorkDir: cwd, Getenv: io.Getenv})
	if err != nil {
		return err
	}
	defer sb.Close()
	if warning != "" {
		fmt.Fprintln(io.Stderr, warning)
	}
	opts := Options(cwd, io, catalog.Servers, sb, tr, nil)
	entries := make([]listEntry, len(catalog.Servers))
	var wg sync.WaitGroup
	for i, s := range catalog.Servers {
		entries[i] = listEntry{Alias: s.Alias, Transport: s.Transport(), Endpoint: s.Endpoint, Command: s.Command, Args: s.Args, AllowedTools: s.AllowedTools, Source: s.Source}
		wg.Go(func() {
			c, err := mcp.Connect(ctx, s, opts)
			if err != nil {
				e := &listError{Type: mcp.ErrorConnectionFailed, Message: err.Error()}
				var ce *mcp.ConnectError
				if errors.As(err, &ce) {
					e.Type = ce.Type
				}
				entries[i].Status, entries[i].Error = "failed", e
				return
			}
			entries[i].Status, entries[i].Protocol = "connected", c.Protocol()
			for _, t := range c.Tools() {
				entries[i].Tools = append(entries[i].Tools, strings.TrimPrefix(t.Definition().Display, "mcp:"+s.Alias+"/"))
			}
			c.Close()
		})
	}
	wg.Wait()

	failed := 0
	for _, e := range entries {
		if e.Error != nil {
			failed++
		}
	}
	if asJSON {
		out := struct {
			Catalog string      `json:"catalog"`
			Servers []listEntry `json:"servers"`
		}{catalog.Path, entries}
		if err := json.MarshalWrite(io.Stdout, out, jsontext.WithIndent("  ")); err != nil {
			return err
		}
		fmt.Fprintln(io.Stdout)
	} else {
		printList(io, catalog.Path, entries)
	}
	if failed > 0 {
		return cmdutil.ExitError{Code: cmdutil.ExitFailed}
	}
	return nil
}

func printList(io IO, path string, entries []listEntry) {
	if len(entries) == 0 {
		fmt.Fprintf(io.Stdout, "%s has no servers.\n", path)
		return
	}
	w := tabwriter.NewWriter(io.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ALIAS\tTRANSPORT\tTARGET\tRESULT\tTOOLS\tSOURCE")
	for _, e := range entries {
		target := e.Endpoint
		if e.Transport == mcp.TransportStdio {
			target = mcp.Server{Command: e.Command, Args: e.Args}.Target()
		}
		result := "connected (" + e.Protocol + ")"
		if e.Error != nil {
			result = "failed"
		}
		tools := strings.Join(e.Tools, ", ")
		if e.Error != nil {
			tools = strings.Join(e.AllowedTools, ", ")
		}
		if tools == "" {
			tools = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", e.Alias, e.Transport, target, result, tools, e.Source)
	}
	w.Flush()
	for _, e := range entries {
		if e.Error != nil {
			fmt.Fprintln(io.Stdout, e.Error.Message)
		}
	}
}
