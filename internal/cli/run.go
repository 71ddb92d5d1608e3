package cli

import (
	"context"
	"io"
	"os"
	"strings"
	"time"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/checkpoint"
	"github.com/tiny-agent/tiny-go/internal/cli/hookwire"
	"github.com/tiny-agent/tiny-go/internal/cli/mcpcmd"
	"github.com/tiny-agent/tiny-go/internal/config"
	"github.com/tiny-agent/tiny-go/internal/lifecycle"
	"github.com/tiny-agent/tiny-go/internal/mcp"
	"github.com/tiny-agent/tiny-go/internal/procs"
	"github.com/tiny-agent/tiny-go/internal/prompt"
	"github.com/tiny-agent/tiny-go/internal/reasoning"
	"github.com/tiny-agent/tiny-go/internal/sandbox"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/store"
	"github.com/tiny-agent/tiny-go/internal/tools"
	"github.com/tiny-agent/tiny-go/internal/ui"
	"github.com/tiny-agent/tiny-go/internal/websearch"
)

// Defaults of cli.md.
const (
	DefaultModel    = "openai/gpt-5.6-luna"
	DefaultEndpoint = "https://openrouter.ai/api/v1"
	providerName    = "openrouter"
	// defaultCompactShare is the share of the context window past which a
	// run compacts first.
	defaultCompactShare = 0.85
)

// runFlags are the flags of the root command.
type runFlags struct {
	session       string
	cont          bool
	resume        bool // pick the session (resume_picker.go)
	model         string
	skills        []string
	plugins       []string
	mcp           []string
	json          bool
	fsync         bool
	contextWindow int64
	compactShare  float64
	idleTimeout   time.Duration
	// requestTimeout bounds each model request as a whole.
	requestTimeout time.Duration
	sandbox        sandboxFlags
	approval       string
	maxToolCalls   int
	// agentTools offers todo_write and task (agents.go); maxParallel
	// bounds the task calls of one reply that run at once.
	agentTools bool
	// noDiagnosticsTool leaves the language servers' diagnostics tool out
	// (print mode's --tools did not name it); diagnostics still follow
	// edits.
	noDiagnosticsTool bool
	// noWebFetch leaves web_fetch out (print mode's --tools did not name
	// WebFetch, or --disallowedTools did).
	noWebFetch bool
	// noWebSearch leaves web search out, native or not (print mode's
	// --tools did not name WebSearch, or --disallowedTools did).
	noWebSearch bool
	maxParallel int
	providerFlags
}

// stdio is the process's standard streams and environment.
type stdio struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// getenv is the environment with the settings files' values standing
	// in for unset variables (loadSettings); settings says where each
	// setting came from (nil where none were loaded).
	getenv   func(string) string
	settings *config.Settings
}

func (s stdio) lookupEnv(name string) (string, bool) {
	v := s.getenv(name)
	return v, v != ""
}

// mcp is s as internal/cli/mcpcmd takes it.
func (s stdio) mcp() mcpcmd.IO {
	return mcpcmd.IO{Stdin: s.stdin, Stdout: s.stdout, Stderr: s.stderr, Getenv: s.getenv, Settings: s.settings}
}

// testHooks let package tests wrap the session log (crash injection) and
// observe the agent; nil in production.
type testHooks struct {
	wrapLog func(agent.Log) agent.Log
}

// runner is one tiny-go process running agent operations on a session.
type runner struct {
	io       stdio
	flags    runFlags
	cwd      string
	model    string
	endpoint string
	access   endpointAccess
	// wire is the chosen protocol; reasoning the details beside the
	// session.
	wire      wireChoice
	reasoning *reasoning.Store
	// webSearch is how web_search is offered (websearch.go).
	webSearch websearch.Choice

	sink  *lifecycle.Tracker
	store *store.Store
	// checkpoints is the working directory's checkpoint store, opened
	// (and its change tracking started) with the first checkpoint hook.
	checkpoints *checkpoint.Store
	txns        *txBridge // bash commands as transactions (tx.go)
	bg          *tools.Manager
	mcp         mcp.Clients
	agent       *agent.Agent
	skills      []prompt.Skill
	tools       []string
	resumed     bool
	hooks       *testHooks
	toolNames   []string // display names of the offered tools
	// servers are the MCP servers picked by --mcp; mcpAliases their names.
	servers []mcp.Server
	// endpointShown is the endpoint without any password, for display.
	endpointShown string
	mcpAliases    []string
	// created is set when this process created the session file, so a
	// startup that fails afterwards can take the empty file back.
	created bool
	// watch sees every model request, to tell a session whose requests
	// all failed for its settings (see discardConfigFailure).
	watch *configWatch
	// uiObserver shows progress in interactive mode; nil in one-shot mode.
	uiObserver *ui.Observer
	// preUI shows interactive-mode progress until the UI starts.
	preUI *gatedObserver
	// oneShot shows a one-shot run (not with --json).
	oneShot *ui.OneShot
	// sandbox confines commands and file writes; closed last.
	sandbox *sandbox.Sandbox

	// recorder is the session's checkpoint recorder (nil: checkpoints
	// off); lsp the language servers (nil: off).
	recorder *checkpoint.Recorder
	lsp      *lspState
	// approval is the --approval mode in effect; gate the Approve hook of
	// the current session in ask mode.
	approval approval.Mode
	gate     *approval.Gate
	// perms are Claude Code's permission rules (permissions.go).
	perms *ccPermissions
	// mcpAuto is set when the servers were chosen without --mcp: one that
	// cannot connect is named and left out, not fatal.
	mcpAuto bool
	// instructions are the instruction files in the system prompt.
	instructions *prompt.Instructions
	// mode is the approval mode now (Shift+Tab changes it); planSandbox
	// the read-only sandbox of bash in plan mode, once made (plan.go).
	mode           *approval.Switch
	planSandbox    *sandbox.Sandbox
	planScratchDir string
	// reviewSandbox runs --approval review's sealed commands (sealed.go).
	reviewSandbox    *sandbox.Sandbox
	reviewScratchDir string
	// readOnly is bash with the tree read-only (plan mode, explore);
	// kids builds the subagents (task.go).
	readOnly func() (tools.Tool, error)
	kids     *children
	// costSink adds up the price of model requests (/cost, one-shot's
	// cost lines); subagents' requests go to it too.
	costSink func(agent.Event)
	// procs records this run's command processes; Close kills leftovers.
	procs *procs.Tracker
	// embed adapts the agent to a host other than the terminal (acp.go);
	// nil otherwise.
	embed *embedding
	// shellTool runs the user's !commands (host.go).
	shellTool tools.Tool
	// costs adds up the session's cost for /cost.
	costs sessionCost
	// userHooks runs the user's hooks and notifications (hooks.go).
	userHooks *hookwire.Hooks
	// exitReason is SessionEnd's reason when the process lets go.
	exitReason string
}

// close releases everything on every exit path: open projections end as
// effect_unknown, owned background processes stop, MCP clients and the
// session writer close, and sinks flush.
func (a *runner) close() {
	if a.sink != nil {
		a.sink.Shutdown()
	}
	if a.reasoning != nil {
		_ = a.reasoning.Close()
	}
	if a.gate != nil {
		_ = a.gate.Close()
	}
	a.userHooks.Ended(firstNonEmpty(a.exitReason, "other"))
	if a.bg != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = a.bg.StopAll(ctx)
		cancel()
	}
	if a.mcp != nil {
		_ = a.mcp.Close() // stdio servers are stopped politely first
	}
	a.lsp.close()
	a.procs.Close()
	if a.checkpoints != nil {
		_ = a.checkpoints.Close()
	}
	a.discardCreated()
	if a.store != nil {
		_ = a.store.Close()
	}
	if a.sink != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = a.sink.Close(ctx)
		cancel()
	}
	// Last: its thread started the commands, whose Pdeathsig fires when
	// it ends.
	a.sandbox.Close()
	a.planSandbox.Close()
	a.reviewSandbox.Close()
	for _, d := range []string{a.planScratchDir, a.reviewScratchDir} {
		if d != "" {
			_ = os.RemoveAll(d)
		}
	}
}

func firstNonEmpty(vs ...string) string {
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
func resumeModel(st *session.State, asked string) string {
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
func (a *runner) resumable() bool {
	return a.store != nil && (!a.created || a.store.State().Facts > 0 || shellJournalled(a.store.Path()))
}

// headerOnly reports whether s holds nothing but its header (a session
// left by a start that never got a prompt): --continue passes it by.
func headerOnly(s store.Summary) bool {
	return s.State == store.SummaryIdle && s.Open == nil && s.LastPrompt == ""
}
