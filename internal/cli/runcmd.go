package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/cli/assemble"
	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/cli/guard"
	"github.com/tiny-agent/tiny-go/internal/cli/headlesscmd"
	"github.com/tiny-agent/tiny-go/internal/cli/interactive"
	"github.com/tiny-agent/tiny-go/internal/cli/modelwire"
	"github.com/tiny-agent/tiny-go/internal/cli/oneshot"
	"github.com/tiny-agent/tiny-go/internal/lifecycle"
)

// rootSink observes a run from startup on: JSON lines on stdout with
// --json, and tracing when it is configured.
func rootSink(ctx context.Context, io assemble.Stdio, asJSON bool) *lifecycle.Tracker {
	var sinks []lifecycle.Sink
	if asJSON {
		sinks = append(sinks, lifecycle.NewJSONLines(io.Stdout))
	}
	otel, err := lifecycle.NewOTel(ctx, lifecycle.OTelConfig{Getenv: io.Getenv})
	if err != nil {
		fmt.Fprintf(io.Stderr, "tiny-go: tracing disabled: %v\n", err)
	}
	sinks = append(sinks, otel)
	return lifecycle.NewTracker(lifecycle.Multi(sinks...))
}

// configureRun makes the root command run prompts: its flags, which may
// come before or after the prompt as in Claude Code (a prompt that starts
// with - goes after --).
func configureRun(a *app, root *cobra.Command) {
	var f assemble.Flags
	fl := root.Flags()
	fl.StringVar(&f.Session, "session", "", "resume the session with this id")
	fl.BoolVarP(&f.Cont, "continue", "c", false, "resume the newest session of this directory")
	addResumeFlag(root, &f)
	fl.StringVar(&f.Model, "model", "", "model id (default $TINY_MODEL or "+modelwire.DefaultModel+")")
	fl.StringArrayVar(&f.Skills, "skill", nil, "a SKILL.md file to offer (repeatable)")
	fl.StringArrayVar(&f.Plugins, "plugin", nil, "built-in tools to enable, comma-separated (repeatable; default all: bash, read, write, edit, bg)")
	fl.StringArrayVar(&f.MCP, "mcp", nil, "use only these MCP servers (comma-separated, repeatable); without it every configured server is used: .tiny-agent/mcp.json, trusted servers of .mcp.json, [mcp_servers], the user's mcp.json, $TINY_MCP_CONFIG (docs/mcp.md)")
	fl.BoolVar(&f.JSON, "json", false, "print lifecycle events as JSON Lines on stdout (one-shot only)")
	fl.BoolVar(&f.Fsync, "fsync", false, "sync every commit to disk (power-loss durable)")
	fl.StringVar(&f.Approval, "approval", "", "the approval mode, one of "+approval.ModeChoice()+" ("+approval.ModeHelp()+"); default ask in interactive mode, auto in one-shot and --json mode")
	fl.Int64Var(&f.ContextWindow, "context-window", 0, "the model's context window in tokens, for automatic compaction (default $TINY_CONTEXT_WINDOW, else the endpoint's model list, else 128000)")
	fl.DurationVar(&f.IdleTimeout, "idle-timeout", 0, "fail a model request that sends nothing for this long (default $TINY_IDLE_TIMEOUT or 120s)")
	f.ProviderFlags.Register(fl)
	fl.DurationVar(&f.RequestTimeout, "request-timeout", 0, "fail a model request that takes longer than this in total (default $TINY_REQUEST_TIMEOUT or 10m)")
	guard.AddSandboxFlags(fl, &f.Sandbox)
	fl.IntVar(&f.MaxToolCalls, "max-tool-calls", agent.DefaultMaxToolCalls, "the most tool calls one model reply may ask for; a reply with more runs none of them and fails the step after one retry")
	fl.BoolVar(&f.AgentTools, "agent-tools", true, "offer the todo_write and task tools (todo list and subagents; docs/agents.md)")
	fl.IntVar(&f.MaxParallel, "max-parallel-tasks", agent.DefaultMaxParallel, "the most task calls (subagents) of one reply that run at once")
	fl.Float64Var(&f.CompactShare, "compact-share", 0, "compact before a run when the last prompt exceeded this share of the window (default $TINY_COMPACT_SHARE or 0.85)")
	root.RunE = func(cmd *cobra.Command, args []string) error {
		io, cwd, err := a.settingsHere(cmd)
		if err != nil {
			return err
		}
		f := f
		assemble.ApplyFileSettings(&f, io.Settings)
		ctx := cmd.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		h := headlesscmd.FlagsFrom(cmd.Flags())
		if h.Active() {
			return headlesscmd.Run(ctx, io, cwd, f, h, cmd.Flags(), args, a.hooks)
		}
		if err := permissionApproval(&f, h, cmd.Flags().Changed("approval")); err != nil {
			return err
		}
		return runRoot(ctx, io, cwd, f, args, a.hooks)
	}
}

// runRoot is the root command: one-shot when a prompt is given,
// interactive otherwise.
func runRoot(ctx context.Context, io assemble.Stdio, cwd string, f assemble.Flags, args []string, hooks *assemble.TestHooks) error {
	promptText := strings.Join(args, " ")
	if f.Resume {
		id, ok, err := interactive.PickSession(ctx, io, cwd, f, strings.TrimSpace(promptText))
		if err != nil || !ok {
			return err
		}
		f.Session, f.Resume = id, false
	}
	if f.Session != "" {
		id, err := expandSessionID(cwd, f.Session)
		if err != nil {
			return err
		}
		f.Session = id
	}
	// --json never goes interactive; without a prompt it is allowed only to
	// recover an open operation of a resumed session, then exit.
	if f.JSON && strings.TrimSpace(promptText) == "" && f.Session == "" && !f.Cont {
		return cmdutil.UsageErrorf("--json requires a one-shot prompt.")
	}
	if f.Session != "" && f.Cont {
		return cmdutil.UsageErrorf("--session and --continue cannot be used together.")
	}
	a, err := assemble.New(ctx, assemble.Options{IO: io, Flags: f, Cwd: cwd, Hooks: hooks,
		Interactive: strings.TrimSpace(promptText) == "",
		Sink:        func() *lifecycle.Tracker { return rootSink(ctx, io, f.JSON) }})
	if err != nil {
		return err
	}
	defer a.Close()
	return oneshot.Run(ctx, a, promptText, func(ctx context.Context) error { return interactive.Run(ctx, a) })
}

// resumeValue is --resume: alone it picks a session (interactive), with a
// value (--resume=ID, as the SDK passes it) it names the session.
type resumeValue struct{ f *assemble.Flags }

func (v resumeValue) String() string { return "" }

// Type is "bool" so that help shows --resume as the switch it is alone.
func (v resumeValue) Type() string { return "bool" }

func (v resumeValue) Set(s string) error {
	if s == resumePick {
		v.f.Resume = true
		return nil
	}
	v.f.Session = strings.TrimSpace(s)
	return nil
}

// resumePick is --resume's value when none is given.
const resumePick = "true"

// addResumeFlag adds --resume (-r): pick the session to resume from a
// list; --resume=ID (as the Claude Agent SDK passes it) and --resume ID
// (claudeArgs) name the session.
func addResumeFlag(root *cobra.Command, f *assemble.Flags) {
	fl := root.Flags()
	fl.VarP(resumeValue{f}, "resume", "r", "pick a session of this directory to resume (interactive); --resume ID resumes that one")
	fl.Lookup("resume").NoOptDefVal = resumePick
}
