package assemble

import (
	"context"
	"io"
	"strings"
	"time"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/cli/guard"
	"github.com/tiny-agent/tiny-go/internal/cli/hookwire"
	"github.com/tiny-agent/tiny-go/internal/cli/lspcmd"
	"github.com/tiny-agent/tiny-go/internal/cli/mcpcmd"
	"github.com/tiny-agent/tiny-go/internal/cli/modelwire"
	"github.com/tiny-agent/tiny-go/internal/cli/observe"
	"github.com/tiny-agent/tiny-go/internal/cli/sessionopen"
	"github.com/tiny-agent/tiny-go/internal/cli/subagents"
	"github.com/tiny-agent/tiny-go/internal/cli/undowire"
	"github.com/tiny-agent/tiny-go/internal/config"
	"github.com/tiny-agent/tiny-go/internal/lifecycle"
	"github.com/tiny-agent/tiny-go/internal/mcp"
	"github.com/tiny-agent/tiny-go/internal/prompt"
	"github.com/tiny-agent/tiny-go/internal/reasoning"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/store"
	"github.com/tiny-agent/tiny-go/internal/tools"
	"github.com/tiny-agent/tiny-go/internal/ui"
)

// Defaults of cli.md.
const (
	// defaultCompactShare is the share of the context window past which a
	// run compacts first.
	DefaultCompactShare = 0.85
)

// Flags are the flags of the root command (and of acp).
type Flags struct {
	Session       string
	Cont          bool
	Resume        bool // pick the session (resume_picker.go)
	Model         string
	Skills        []string
	Plugins       []string
	MCP           []string
	JSON          bool
	Fsync         bool
	ContextWindow int64
	CompactShare  float64
	IdleTimeout   time.Duration
	// requestTimeout bounds each model request as a whole.
	RequestTimeout time.Duration
	Sandbox        guard.SandboxFlags
	Approval       string
	MaxToolCalls   int
	// agentTools offers todo_write and task (agents.go); maxParallel
	// bounds the task calls of one reply that run at once.
	AgentTools bool
	// noDiagnosticsTool leaves the language servers' diagnostics tool out
	// (print mode's --tools did not name it); diagnostics still follow
	// edits.
	NoDiagnosticsTool bool
	// noWebFetch leaves web_fetch out (print mode's --tools did not name
	// WebFetch, or --disallowedTools did).
	NoWebFetch bool
	// noWebSearch leaves web search out, native or not (print mode's
	// --tools did not name WebSearch, or --disallowedTools did).
	NoWebSearch   bool
	MaxParallel   int
	ProviderFlags modelwire.Flags
}

// Stdio is the process's standard streams and environment.
type Stdio struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// getenv is the environment with the settings files' values standing
	// in for unset variables (loadSettings); settings says where each
	// setting came from (nil where none were loaded).
	Getenv   func(string) string
	Settings *config.Settings
}

func (s Stdio) LookupEnv(name string) (string, bool) {
	v := s.Getenv(name)
	return v, v != ""
}

// mcp is s as internal/cli/mcpcmd takes it.
func (s Stdio) mcp() mcpcmd.IO {
	return mcpcmd.IO{Stdin: s.Stdin, Stdout: s.Stdout, Stderr: s.Stderr, Getenv: s.Getenv, Settings: s.Settings}
}

// TestHooks let package tests wrap the session log (crash injection) and
// observe the agent; nil in production.
type TestHooks struct {
	WrapLog func(agent.Log) agent.Log
}

// Runner is one tiny-go process running agent operations on a session.
type Runner struct {
	IO    Stdio
	Flags Flags
	Cwd   string
	// wire is the model and provider choice (internal/cli/modelwire);
	// reasoning the details beside the session.
	Wire      *modelwire.Choice
	Reasoning *reasoning.Store

	sink  *lifecycle.Tracker
	Store *store.Store
	// checkpoints and bash commands as transactions (checkpoints.go,
	// internal/cli/undowire); made on first use.
	checkpoints *undowire.Undo
	bg          *tools.Manager
	MCP         mcp.Clients
	Agent       *agent.Agent
	Skills      []prompt.Skill
	tools       []string
	Resumed     bool
	Hooks       *TestHooks
	ToolNames   []string // display names of the offered tools
	// servers are the MCP servers picked by --mcp; mcpAliases their names.
	Servers    []mcp.Server
	MCPAliases []string
	// created is set when this process created the session file, so a
	// startup that fails afterwards can take the empty file back.
	Created bool
	// uiObserver shows progress in interactive mode; nil in one-shot mode.
	UIObserver *ui.Observer
	// preUI shows interactive-mode progress until the UI starts.
	PreUI *observe.GatedObserver
	// OneShot shows a one-shot run (not with --json).
	OneShot *ui.OneShot
	// guard holds the permission rules, the approval mode at start and
	// the sandboxes (internal/cli/guard); closed last.
	Guard *guard.Guard

	// LSP is the language servers (nil: off).
	LSP *lspcmd.Servers
	// Gate is the Approve hook of the current session in ask mode.
	Gate *approval.Gate
	// mcpAuto is set when the servers were chosen without --mcp: one that
	// cannot connect is named and left out, not fatal.
	mcpAuto bool
	// instructions are the instruction files in the system prompt.
	Instructions *prompt.Instructions
	// Mode is the approval mode now (Shift+Tab changes it).
	Mode *approval.Switch
	// Kids builds the subagents (agents.go).
	Kids *subagents.Children
	// costSink adds up the price of model requests (/cost, one-shot's
	// cost lines); subagents' requests go to it too.
	costSink func(agent.Event)
	// embed adapts the agent to a host other than the terminal (acp.go);
	// nil otherwise.
	Embed *Embedding
	// shellTool runs the user's !commands (host.go).
	shellTool tools.Tool
	// costs adds up the session's cost for /cost.
	Costs observe.SessionCost
	// userHooks runs the user's hooks and notifications (hooks.go).
	UserHooks *hookwire.Hooks
	// ExitReason is SessionEnd's reason when the process lets go.
	ExitReason string
}

// close releases everything on every exit path: open projections end as
// effect_unknown, owned background processes stop, MCP clients and the
// session writer close, and sinks flush.
func (a *Runner) Close() {
	if a.sink != nil {
		a.sink.Shutdown()
	}
	if a.Reasoning != nil {
		_ = a.Reasoning.Close()
	}
	if a.Gate != nil {
		_ = a.Gate.Close()
	}
	a.UserHooks.Ended(FirstNonEmpty(a.ExitReason, "other"))
	if a.bg != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = a.bg.StopAll(ctx)
		cancel()
	}
	if a.MCP != nil {
		_ = a.MCP.Close() // stdio servers are stopped politely first
	}
	a.LSP.Close()
	a.Guard.Procs().Close()
	_ = a.checkpoints.Close()
	a.DiscardCreated()
	if a.Store != nil {
		_ = a.Store.Close()
	}
	if a.sink != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = a.sink.Close(ctx)
		cancel()
	}
	// Last: its thread started the commands, whose Pdeathsig fires when
	// it ends.
	a.Guard.Close()
}

func FirstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// resumeModel is the model a resume of st uses: the one asked for, else the
// model of the open step, else the session's.
func ResumeModel(st *session.State, asked string) string {
	if asked != "" {
		return asked
	}
	if op := st.Operation; op != nil && op.Step != nil && op.Step.ConfigurationSnapshot.Model != "" {
		return op.Step.ConfigurationSnapshot.Model
	}
	return st.Header.Model
}

// resumable reports whether the session holds anything to resume: a
// session this process created that never got a prompt is removed on exit
// (discardCreated), so no resume hint names it.
func (a *Runner) Resumable() bool {
	return a.Store != nil && (!a.Created || !sessionopen.Empty(a.Store))
}

// headerOnly reports whether s holds nothing but its header (a session
// left by a start that never got a prompt): --continue passes it by.
func HeaderOnly(s store.Summary) bool {
	return s.State == store.SummaryIdle && s.Open == nil && s.LastPrompt == ""
}
