package cli

import (
	"context"
	"errors"
	"fmt"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/spf13/cobra"

	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/mcp"
	"github.com/tiny-agent/tiny-go/internal/procs"
	"github.com/tiny-agent/tiny-go/internal/sandbox"
	"github.com/tiny-agent/tiny-go/internal/secrets"
	"github.com/tiny-agent/tiny-go/internal/ui"
)

// mcpOptions are the options of every MCP connection of this run: stdio
// servers start in the working directory with a minimal environment that
// never holds a secret tiny-go knows, and a server that goes away
// mid-session is reported once: through display (the interactive UI, nil
// otherwise) while it is attached, else on stderr.
func mcpOptions(cwd string, io stdio, servers []mcp.Server, sb *sandbox.Sandbox, tr *procs.Tracker, display *ui.Observer) mcp.Options {
	var mu sync.Mutex
	return mcp.Options{
		ClientName:    "tiny-go",
		ClientVersion: version,
		WorkDir:       cwd,
		LookupEnv:     io.lookupEnv,
		Secrets:       secretValues(io, servers),
		Sandbox:       sb,
		Procs:         tr,
		Notice: func(line string) {
			if display.Notice(line) {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintln(io.stderr, line)
		},
		OAuth:  mcpOAuth(io, false),
		Elicit: mcpElicit(io, display),
	}
}

// elicit puts a server's form to the editor (internal/acp: ACP's
// elicitation/create, else a permission request); a host without its own
// way (the headless runner) asks whether to send the defaults.
func (e *embedding) elicit(ctx context.Context, f mcp.Form) (mcp.ElicitAnswer, error) {
	if e.host.Elicit != nil {
		return e.host.Elicit(ctx, f)
	}
	ans, err := e.ask(ctx, ui.FormPrompt(f))
	switch {
	case err != nil:
		return mcp.ElicitAnswer{Action: mcp.ElicitCancel}, nil
	case ans.Choice == approval.Deny:
		return mcp.ElicitAnswer{Action: mcp.ElicitDecline}, nil
	}
	return mcp.ElicitAnswer{Action: mcp.ElicitAccept, Content: f.Defaults()}, nil
}

// mcpElicit puts a server's form to the user: in the interactive UI while
// it runs (a form to fill in), else on the terminal a line per field;
// without a terminal it is declined with one line on stderr.
func mcpElicit(io stdio, display *ui.Observer) mcp.ElicitFunc {
	return func(ctx context.Context, f mcp.Form) (mcp.ElicitAnswer, error) {
		ans, err := display.AskForm(ctx, f)
		if !errors.Is(err, ui.ErrNotAttached) {
			return ans, err
		}
		if !ui.IsTerminal(io.stdin, io.stderr) {
			fmt.Fprintf(io.stderr, "MCP %s asked for input (%s); declined: there is no terminal to answer on\n", f.Server, ui.OneLine(f.Message))
			return mcp.ElicitAnswer{Action: mcp.ElicitDecline}, nil
		}
		return ui.AskForm(ctx, io.stdin, io.stderr, f)
	}
}

// secretValues are the values of the model's key variables and of the MCP
// token variables: no stdio server may get them.
func secretValues(io stdio, servers []mcp.Server) []string {
	// Every key variable (OpenRouter, endpoint, Anthropic) and every
	// token of the catalog.
	names := append(secrets.Names(io.getenv), io.settings.TokenEnvNames()...)
	for _, s := range servers {
		if s.TokenEnv != "" {
			names = append(names, s.TokenEnv)
		}
	}
	var values []string
	for _, name := range names {
		if v := io.getenv(name); v != "" {
			values = append(values, v)
		}
	}
	return values
}

// interruptible is ctx cancelled by Ctrl+C (or SIGTERM, SIGHUP) while MCP
// servers connect, so a slow server is given up, and every server already
// started is stopped, instead of the signal killing tiny-go outright.
func interruptible(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
}

func newMCPCommand(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Manage MCP servers: list (connect and check), add, remove, login, logout",
		RunE:  runGroup(a),
	}
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "Connect to every configured server and show its transport, result, protocol, tools and source file",
		Example: `  tiny-go mcp list
  tiny-go mcp list --json`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			io, cwd, err := a.settingsHere(cmd)
			if err != nil {
				return err
			}
			ctx, stop := interruptible(cmdContext(cmd))
			defer stop()
			return mcpList(ctx, io, cwd, asJSON)
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	cmd.AddCommand(list, newMCPAddCommand(a), newMCPRemoveCommand(a), newMCPLoginCommand(a), newMCPLogoutCommand(a), newMCPCallCommand(a))
	return cmd
}

func cmdContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}

// mcpListEntry is one server of `mcp list --json`.
type mcpListEntry struct {
	Alias        string   `json:"alias"`
	Transport    string   `json:"transport"`
	Endpoint     string   `json:"endpoint,omitzero"`
	Command      string   `json:"command,omitzero"`
	Args         []string `json:"args,omitzero"`
	Status       string   `json:"status"` // "connected" or "failed"
	Protocol     string   `json:"protocol,omitzero"`
	AllowedTools []string `json:"allowedTools,omitzero"` // absent: every tool
	// Tools are the offered tools of a connected server.
	Tools  []string `json:"tools,omitzero"`
	Source string   `json:"source"`
	Error  *mcpErr  `json:"error,omitzero"`
}

type mcpErr struct {
	Type    string `json:"type"` // timeout or connection_failed
	Message string `json:"message"`
}

// mcpList connects to every catalog server at once and reports each; it
// fails (exit 1) when any server does.
func mcpList(ctx context.Context, io stdio, cwd string, asJSON bool) error {
	catalog, ok, err := mcpCatalog(io, cwd)
	if err != nil {
		return err
	}
	if !ok {
		return usageError{Err: errNoMCPServers}
	}
	// What a killed tiny-go left running here is stopped first; the
	// servers started now are recorded like a run's commands.
	r := &runner{io: io, cwd: cwd}
	if err := r.trackProcesses(); err != nil {
		return err
	}
	defer r.procs.Close()
	// The servers run confined as in a run with the default --sandbox.
	sb, warning, err := sandbox.New(sandbox.Policy{Mode: sandbox.Workspace, WorkDir: cwd, Getenv: io.getenv})
	if err != nil {
		return err
	}
	defer sb.Close()
	if warning != "" {
		fmt.Fprintln(io.stderr, warning)
	}
	opts := mcpOptions(cwd, io, catalog.Servers, sb, r.procs, nil)
	entries := make([]mcpListEntry, len(catalog.Servers))
	var wg sync.WaitGroup
	for i, s := range catalog.Servers {
		entries[i] = mcpListEntry{Alias: s.Alias, Transport: s.Transport(), Endpoint: s.Endpoint, Command: s.Command, Args: s.Args, AllowedTools: s.AllowedTools, Source: s.Source}
		wg.Go(func() {
			c, err := mcp.Connect(ctx, s, opts)
			if err != nil {
				e := &mcpErr{Type: mcp.ErrorConnectionFailed, Message: err.Error()}
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
			Catalog string         `json:"catalog"`
			Servers []mcpListEntry `json:"servers"`
		}{catalog.Path, entries}
		if err := json.MarshalWrite(io.stdout, out, jsontext.WithIndent("  ")); err != nil {
			return err
		}
		fmt.Fprintln(io.stdout)
	} else {
		printMCPList(io, catalog.Path, entries)
	}
	if failed > 0 {
		return exitError{Code: exitFailed}
	}
	return nil
}

func printMCPList(io stdio, path string, entries []mcpListEntry) {
	if len(entries) == 0 {
		fmt.Fprintf(io.stdout, "%s has no servers.\n", path)
		return
	}
	w := tabwriter.NewWriter(io.stdout, 0, 0, 2, ' ', 0)
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
			fmt.Fprintln(io.stdout, e.Error.Message)
		}
	}
}
