// Package acpcmd is `tiny-go acp`: the Agent Client Protocol for editors,
// each editor session an assembled Runner.
package acpcmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tiny-agent/tiny-go/internal/acp"
	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/cli/assemble"
	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/cli/guard"
	"github.com/tiny-agent/tiny-go/internal/cli/interactive"
	"github.com/tiny-agent/tiny-go/internal/cli/modelwire"
	"github.com/tiny-agent/tiny-go/internal/cli/sessionview"
	"github.com/tiny-agent/tiny-go/internal/cli/subagents"
	"github.com/tiny-agent/tiny-go/internal/mcp"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/store"
)

// newACPCommand is `tiny-go acp`: the Agent Client Protocol on stdin and
// stdout, for editors (docs/acp.md). Each ACP session is a runner built
// exactly as the terminal's, so approvals, the sandbox, recovery and the
// session file behave the same.
func NewCommand(fac *cmdutil.Factory) *cobra.Command {
	var f assemble.Flags
	cmd := &cobra.Command{
		Use:   "acp",
		Short: "Serve the Agent Client Protocol on stdin/stdout (for Zed, JetBrains, Neovim)",
		Args:  cmdutil.ExactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			mode := approval.Ask
			if f.Approval != "" {
				m, err := approval.ParseMode(f.Approval)
				if err != nil {
					return cmdutil.UsageError{Err: err}
				}
				mode = m
			}
			ctx, stop := cmdutil.Interruptible(cmd.Context())
			defer stop()
			// A client that closes its end of stdout must not kill tiny-go
			// with SIGPIPE before the running operation is aborted
			// durably: with a handler, the write fails instead. (Not
			// signal.Ignore: commands would inherit SIG_IGN.)
			pipe := make(chan os.Signal, 1)
			signal.Notify(pipe, syscall.SIGPIPE)
			defer signal.Stop(pipe)
			b := &acpBackend{factory: fac, flags: f, fl: cmd.Flags()}
			return acp.Serve(ctx, acp.Options{In: fac.Stdin, Out: fac.Stdout, Log: fac.Stderr, Backend: b, Mode: mode, Version: cmdutil.Version})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Model, "model", "", "model id (default $TINY_MODEL or "+modelwire.DefaultModel+")")
	fl.StringArrayVar(&f.Plugins, "plugin", nil, "built-in tools to enable, comma-separated (repeatable; default all)")
	fl.StringArrayVar(&f.MCP, "mcp", nil, "use only these MCP servers (comma-separated, repeatable); without it every configured server is used (docs/mcp.md)")
	fl.StringArrayVar(&f.Skills, "skill", nil, "a SKILL.md file to offer (repeatable)")
	fl.BoolVar(&f.Fsync, "fsync", false, "sync every commit to disk (power-loss durable)")
	fl.StringVar(&f.Approval, "approval", "", "the mode sessions start in, one of "+approval.ModeChoice()+" (default ask; "+approval.ModeHelp()+"); the editor switches it with session/set_mode")
	fl.Int64Var(&f.ContextWindow, "context-window", 0, "the model's context window in tokens (default $TINY_CONTEXT_WINDOW, else the endpoint's model list, else 128000)")
	fl.DurationVar(&f.IdleTimeout, "idle-timeout", 0, "fail a model request that sends nothing for this long (default $TINY_IDLE_TIMEOUT or 120s)")
	fl.DurationVar(&f.RequestTimeout, "request-timeout", 0, "fail a model request that takes longer than this in total (default $TINY_REQUEST_TIMEOUT or 10m)")
	fl.IntVar(&f.MaxToolCalls, "max-tool-calls", agent.DefaultMaxToolCalls, "the most tool calls one model reply may ask for; a reply with more runs none of them and fails the step after one retry")
	fl.BoolVar(&f.AgentTools, "agent-tools", true, "offer the todo_write and task tools (todo list and subagents; docs/agents.md)")
	fl.IntVar(&f.MaxParallel, "max-parallel-tasks", agent.DefaultMaxParallel, "the most task calls (subagents) of one reply that run at once")
	f.ProviderFlags.Register(fl)
	guard.AddSandboxFlags(fl, &f.Sandbox)
	return cmd
}

// acpBackend builds ACP sessions as runners.
type acpBackend struct {
	factory *cmdutil.Factory
	flags   assemble.Flags
	fl      *pflag.FlagSet // to tell the settings files which flags were given
}

func (b *acpBackend) io() assemble.Stdio {
	// Nothing but the protocol may reach stdout, and nothing may read the
	// protocol's stdin.
	return assemble.Stdio{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: b.factory.Stderr, Getenv: b.factory.Getenv}
}

// MissingKey reports a provider that cannot run for want of a key.
func (b *acpBackend) MissingKey() (string, string) {
	io, f := b.io(), b.flags
	if cwd, err := b.factory.WorkDir(); err == nil {
		if io, err = assemble.LoadSettings(io, cwd, b.fl); err != nil {
			return "", err.Error()
		}
		assemble.ApplyFileSettings(&f, io.Settings)
	}
	_, err := modelwire.New(modelwire.Options{Getenv: io.Getenv, Flags: f.ProviderFlags, Model: f.Model})
	if err == nil {
		return "", ""
	}
	msg := err.Error()
	for _, v := range []string{modelwire.AnthropicKeyVar, modelwire.OpenRouterKeyVar, modelwire.OpenaiKeyVar} {
		if strings.HasPrefix(msg, v) {
			return v, msg
		}
	}
	return "", ""
}

func (b *acpBackend) Open(ctx context.Context, req acp.OpenRequest) (acp.Session, error) {
	// The settings files of the session's directory count, as for a run
	// started there.
	io, err := assemble.LoadSettings(b.io(), req.Cwd, b.fl)
	if err != nil {
		return nil, err
	}
	f := b.flags
	assemble.ApplyFileSettings(&f, io.Settings)
	f.Session = req.SessionID
	// The acp layer decides ask or auto per session; the gate is always
	// there so the editor can switch.
	f.Approval = string(approval.Ask)
	f.JSON = true
	f.MCP = append(slices.Clone(f.MCP), b.catalogServers(req.MCPNames)...)
	// The editor's mode (session/set_mode) is the session's.
	r, err := assemble.New(ctx, assemble.Options{IO: io, Flags: f, Cwd: req.Cwd, Embed: &assemble.Embedding{Host: req.Host}, Mode: req.Host.Mode})
	if err != nil {
		return nil, err
	}
	return acpSession{r}, nil
}

// catalogServers are the names among the editor's MCP servers that the
// MCP catalog knows; the others are named on stderr, since tiny-go offers
// an MCP server's tools only as its catalog entry lists them.
func (b *acpBackend) catalogServers(names []string) []string {
	if len(names) == 0 {
		return nil
	}
	lookup := assemble.Stdio{Getenv: b.factory.Getenv}.LookupEnv
	known := map[string]bool{}
	if path, ok := lookup(mcp.ConfigEnv); ok {
		if c, err := mcp.LoadCatalog(path, lookup); err == nil {
			for _, s := range c.Servers {
				known[s.Alias] = true
			}
		}
	}
	var out []string
	for _, n := range names {
		if known[n] {
			out = append(out, n)
		} else {
			fmt.Fprintf(b.factory.Stderr, "tiny-go: MCP server %q from the editor is not connected: add it to $%s with its allowedTools\n", n, mcp.ConfigEnv)
		}
	}
	return out
}

// acpSession is a runner seen as an ACP session.
type acpSession struct{ r *assemble.Runner }

func (s acpSession) ID() string            { return s.r.Store.ID() }
func (s acpSession) WorkDir() string       { return s.r.Cwd }
func (s acpSession) Agent() *agent.Agent   { return s.r.Agent }
func (s acpSession) State() *session.State { return s.r.Store.State() }
func (s acpSession) Close()                { s.r.Close() }

// Info answers /agents, /todos, /mcp, /hooks and /permissions as the
// terminal does.
func (s acpSession) Info(name string) []string { return interactive.NewHost(s.r).Info(name) }

// RewindTurns and PlanRewind are /rewind, through the terminal's rewinder.
func (s acpSession) RewindTurns() ([]string, error) {
	turns, err := interactive.NewRewinder(s.r).Turns()
	if err != nil {
		return nil, err
	}
	lines := make([]string, len(turns))
	for i, t := range turns {
		lines[i] = fmt.Sprintf("%d. %s (%s)", t.N, cmdutil.OneLine(t.Prompt), t.At.Format("2006-01-02 15:04"))
	}
	return lines, nil
}

func (s acpSession) PlanRewind(ctx context.Context, req acp.RewindRequest) ([]string, func(context.Context) ([]string, error), error) {
	rw := interactive.NewRewinder(s.r)
	plan, err := rw.Plan(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	apply := func(ctx context.Context) ([]string, error) {
		res, err := rw.Apply(ctx, plan)
		return res.Lines, err
	}
	return plan.Preview, apply, nil
}

// List is session/list of `tiny-go acp`: the sessions of cwd, each
// subagent's right after its parent's.
func (b *acpBackend) List(cwd string) ([]acp.Listed, error) {
	sums, err := store.List(cwd)
	if err != nil {
		return nil, err
	}
	sums, links := sessionview.NestSessions(sums)
	out := make([]acp.Listed, 0, len(sums))
	for _, s := range sums {
		l := acp.Listed{ID: s.ID, Title: s.FirstPrompt, UpdatedAt: s.Started}
		if fi, err := os.Stat(s.Path); err == nil {
			l.UpdatedAt = fi.ModTime()
		}
		if k, ok := links[s.ID]; ok {
			l.Parent, l.Agent, l.Title = k.Parent, k.Agent, subagents.ChildLabel(k)
		}
		out = append(out, l)
	}
	return out, nil
}
