package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/checkpoint"
	"github.com/tiny-agent/tiny-go/internal/config"
	"github.com/tiny-agent/tiny-go/internal/interrupt"
	"github.com/tiny-agent/tiny-go/internal/lifecycle"
	"github.com/tiny-agent/tiny-go/internal/mcp"
	"github.com/tiny-agent/tiny-go/internal/procs"
	"github.com/tiny-agent/tiny-go/internal/prompt"
	"github.com/tiny-agent/tiny-go/internal/provider"
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
	userHooks *userHooks
	// exitReason is SessionEnd's reason when the process lets go.
	exitReason string
}

// configureRun makes the root command run prompts: its flags, which may
// come before or after the prompt as in Claude Code (a prompt that starts
// with - goes after --).
func configureRun(a *app, root *cobra.Command) {
	var f runFlags
	fl := root.Flags()
	fl.StringVar(&f.session, "session", "", "resume the session with this id")
	fl.BoolVarP(&f.cont, "continue", "c", false, "resume the newest session of this directory")
	addResumeFlag(root, &f)
	fl.StringVar(&f.model, "model", "", "model id (default $TINY_MODEL or "+DefaultModel+")")
	fl.StringArrayVar(&f.skills, "skill", nil, "a SKILL.md file to offer (repeatable)")
	fl.StringArrayVar(&f.plugins, "plugin", nil, "built-in tools to enable, comma-separated (repeatable; default all: bash, read, write, edit, bg)")
	fl.StringArrayVar(&f.mcp, "mcp", nil, "use only these MCP servers (comma-separated, repeatable); without it every configured server is used: .tiny-agent/mcp.json, trusted servers of .mcp.json, [mcp_servers], the user's mcp.json, $TINY_MCP_CONFIG (docs/mcp.md)")
	fl.BoolVar(&f.json, "json", false, "print lifecycle events as JSON Lines on stdout (one-shot only)")
	fl.BoolVar(&f.fsync, "fsync", false, "sync every commit to disk (power-loss durable)")
	fl.StringVar(&f.approval, "approval", "", "the approval mode, one of "+approval.ModeChoice()+" ("+approval.ModeHelp()+"); default ask in interactive mode, auto in one-shot and --json mode")
	fl.Int64Var(&f.contextWindow, "context-window", 0, "the model's context window in tokens, for automatic compaction (default $TINY_CONTEXT_WINDOW, else the endpoint's model list, else 128000)")
	fl.DurationVar(&f.idleTimeout, "idle-timeout", 0, "fail a model request that sends nothing for this long (default $TINY_IDLE_TIMEOUT or 120s)")
	f.providerFlags.register(fl)
	fl.DurationVar(&f.requestTimeout, "request-timeout", 0, "fail a model request that takes longer than this in total (default $TINY_REQUEST_TIMEOUT or 10m)")
	addSandboxFlags(fl, &f.sandbox)
	fl.IntVar(&f.maxToolCalls, "max-tool-calls", agent.DefaultMaxToolCalls, "the most tool calls one model reply may ask for; a reply with more runs none of them and fails the step after one retry")
	fl.BoolVar(&f.agentTools, "agent-tools", true, "offer the todo_write and task tools (todo list and subagents; docs/agents.md)")
	fl.IntVar(&f.maxParallel, "max-parallel-tasks", agent.DefaultMaxParallel, "the most task calls (subagents) of one reply that run at once")
	fl.Float64Var(&f.compactShare, "compact-share", 0, "compact before a run when the last prompt exceeded this share of the window (default $TINY_COMPACT_SHARE or 0.85)")
	root.RunE = func(cmd *cobra.Command, args []string) error {
		io, cwd, err := a.settingsHere(cmd)
		if err != nil {
			return err
		}
		f := f
		applyFileSettings(&f, io.settings)
		ctx := cmd.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		h := headlessFrom(cmd.Flags())
		if h.active() {
			return runHeadless(ctx, io, cwd, f, h, cmd.Flags(), args, a.hooks)
		}
		if err := permissionApproval(&f, h, cmd.Flags().Changed("approval")); err != nil {
			return err
		}
		return runRoot(ctx, io, cwd, f, args, a.hooks)
	}
}

// runRoot is the root command: one-shot when a prompt is given,
// interactive otherwise.
func runRoot(ctx context.Context, io stdio, cwd string, f runFlags, args []string, hooks *testHooks) error {
	promptText := strings.Join(args, " ")
	if f.resume {
		id, ok, err := pickSession(ctx, io, cwd, f, strings.TrimSpace(promptText))
		if err != nil || !ok {
			return err
		}
		f.session, f.resume = id, false
	}
	if f.session != "" {
		id, err := expandSessionID(cwd, f.session)
		if err != nil {
			return err
		}
		f.session = id
	}
	// --json never goes interactive; without a prompt it is allowed only to
	// recover an open operation of a resumed session, then exit.
	if f.json && strings.TrimSpace(promptText) == "" && f.session == "" && !f.cont {
		return usageErrorf("--json requires a one-shot prompt.")
	}
	if f.session != "" && f.cont {
		return usageErrorf("--session and --continue cannot be used together.")
	}
	a := &runner{io: io, flags: f, cwd: cwd, hooks: hooks}
	if strings.TrimSpace(promptText) == "" {
		a.uiObserver = ui.NewObserver(cwd)
	}
	if err := a.configure(); err != nil {
		return err
	}

	// Sinks first, so startup itself is observed.
	var sinks []lifecycle.Sink
	var jsonSink *lifecycle.JSONLines
	if f.json {
		jsonSink = lifecycle.NewJSONLines(io.stdout)
		sinks = append(sinks, jsonSink)
	}
	otel, err := lifecycle.NewOTel(ctx, lifecycle.OTelConfig{Getenv: io.getenv})
	if err != nil {
		fmt.Fprintf(io.stderr, "tiny-go: tracing disabled: %v\n", err)
	}
	sinks = append(sinks, otel)
	a.sink = lifecycle.NewTracker(lifecycle.Multi(sinks...))
	defer a.close()

	if err := a.start(ctx); err != nil {
		return err
	}
	return a.operate(ctx, promptText)
}

// configure resolves everything that can fail before a session file is
// created: the working directory, plugins, MCP servers and credentials.
func (a *runner) configure() error {
	abs, err := filepath.Abs(a.cwd)
	if err != nil {
		return usageErrorf("--cwd: %v", err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return usageErrorf("--cwd: %s is not a directory", abs)
	}
	a.cwd = abs
	if a.flags.maxToolCalls < 1 {
		return usageErrorf("--max-tool-calls must be at least 1")
	}
	a.configurePermissions()
	if err := a.configureApproval(); err != nil {
		return err
	}
	if a.tools, err = tools.Select(a.flags.plugins); err != nil {
		return usageError{err}
	}
	if a.servers, err = configureMCP(a.flags.mcp, a.io, a.cwd); err != nil {
		return usageError{err}
	}
	if len(a.flags.mcp) == 0 {
		a.servers = a.autoMCPServers() // mcp_auto.go
	}
	var secretVars []string
	for _, sv := range a.servers {
		a.mcpAliases = append(a.mcpAliases, sv.Alias)
		secretVars = append(secretVars, sv.SecretVars...)
	}
	// The variables the servers' headers and oauth settings name are
	// secrets too (as tokenEnv).
	a.io.conceal(secretVars)
	a.model = firstNonEmpty(a.flags.model, a.io.getenv("TINY_MODEL"), DefaultModel)
	if err := a.configureProvider(); err != nil {
		return err
	}
	if err := a.configureWebSearch(); err != nil {
		return err
	}
	if a.flags.contextWindow == 0 {
		if v := a.io.getenv("TINY_CONTEXT_WINDOW"); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 {
				return usageErrorf("TINY_CONTEXT_WINDOW must be a positive integer")
			}
			a.flags.contextWindow = n
		}
	}
	if a.flags.compactShare == 0 {
		a.flags.compactShare = defaultCompactShare
		if v := a.io.getenv("TINY_COMPACT_SHARE"); v != "" {
			s, err := strconv.ParseFloat(v, 64)
			if err != nil || s <= 0 || s > 1 {
				return usageErrorf("TINY_COMPACT_SHARE must be a number in (0, 1]")
			}
			a.flags.compactShare = s
		}
	}
	if a.flags.idleTimeout == 0 {
		if v := a.io.getenv("TINY_IDLE_TIMEOUT"); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return usageErrorf("TINY_IDLE_TIMEOUT must be a positive duration such as 90s")
			}
			a.flags.idleTimeout = d
		}
	}
	if err := a.configureRequestTimeout(); err != nil {
		return err
	}
	if a.flags.idleTimeout < 0 {
		return usageErrorf("--idle-timeout must be a positive duration such as 90s")
	}
	if a.flags.compactShare <= 0 || a.flags.compactShare > 1 {
		return usageErrorf("--compact-share must be a number in (0, 1]")
	}
	// Last: nothing after it may fail, so the sandbox is always closed.
	return a.newSandbox()
}

// start attaches the session, connects MCP servers and builds the agent,
// reporting startup events.
func (a *runner) start(ctx context.Context) error {
	began := time.Now()
	startupStarted := false
	fail := func(errType string, err error) error {
		a.discardCreated()
		if !startupStarted {
			a.sink.Emit(lifecycle.StartupStarted(a.model, a.tools, nonNilStrings(a.mcpAliases)).At(began))
		}
		a.sink.Emit(lifecycle.StartupCompleted(time.Since(began), lifecycle.Failed, errType))
		return err
	}

	envID, err := store.EnvironmentIdentity(a.cwd, a.io.getenv)
	if err != nil {
		return fail("startup_setup_error", fmt.Errorf("environment identity: %w", err))
	}
	if err := a.attach(envID); err != nil {
		return fail("startup_setup_error", err)
	}
	// A resumed session keeps its model unless one is asked for, so that
	// resuming does not change the configuration by accident.
	if a.resumed {
		a.model = resumeModel(a.store.State(), firstNonEmpty(a.flags.model, a.io.getenv("TINY_MODEL"), chosenModel(a.store.Path())))
	}
	a.sink.Emit(lifecycle.StartupStarted(a.model, a.tools, nonNilStrings(a.mcpAliases)).At(began))
	startupStarted = true
	a.sink.Emit(lifecycle.SessionAttached(a.store.ID(), a.resumed))

	// Before the first stdio MCP server starts: its process group is
	// recorded there.
	if err := a.trackProcesses(); err != nil {
		return fail("startup_setup_error", err)
	}
	mcpCtx, stopMCPSignals := interruptible(ctx)
	defer stopMCPSignals()
	mcpOpts := mcpOptions(a.cwd, a.io, a.servers, a.sandbox, a.procs, a.uiObserver)
	if a.embed != nil {
		mcpOpts.Elicit = a.embed.elicit // forms go to the editor (ACP)
	}
	for _, s := range a.servers {
		a.sink.Emit(lifecycle.MCPStarted(s.Alias))
		t0 := time.Now()
		c, err := mcp.Connect(mcpCtx, s, mcpOpts)
		if err != nil {
			kind := "connection_failed"
			var ce *mcp.ConnectError
			if errors.As(err, &ce) && ce.Type != "" {
				kind = ce.Type
			}
			a.sink.Emit(lifecycle.MCPFailed(s.Alias, time.Since(t0), kind))
			if a.mcpAuto {
				fmt.Fprintf(a.io.stderr, "%s: MCP %s: not used: %v (tiny-go mcp list shows the servers)\n", programName, s.Alias, err)
				a.mcpAliases = slices.DeleteFunc(a.mcpAliases, func(x string) bool { return x == s.Alias })
				continue
			}
			return fail("mcp_setup_error", err)
		}
		a.mcp = append(a.mcp, c)
		a.sink.Emit(lifecycle.MCPConnected(s.Alias, time.Since(t0), c.Protocol(), len(c.Tools())))
		if !a.flags.json {
			fmt.Fprintln(a.io.stderr, c.StartupLine())
		}
	}

	if err := a.buildAgent(envID); err != nil {
		return fail("agent_setup_error", err)
	}
	a.sessionStarted(ctx)
	a.sink.Emit(lifecycle.StartupCompleted(time.Since(began), lifecycle.Succeeded, ""))
	return nil
}

// attach opens the session named by --session or --continue, or creates a
// new one.
func (a *runner) attach(envID string) error {
	opts := store.Options{Fsync: a.flags.fsync}
	var err error
	switch {
	case a.flags.session != "":
		if path, perr := store.PathByID(a.cwd, a.flags.session); perr == nil {
			if err := a.finishRewind(path); err != nil {
				return err
			}
		}
		a.store, err = store.Open(a.cwd, a.flags.session, opts)
		a.resumed = true
	case a.flags.cont:
		a.store, err = openNewest(a.cwd, opts, a.finishRewind)
		a.resumed = true
	default:
		a.store, err = store.Create(a.cwd, store.NewHeader{Provider: a.access.name, Model: a.model, EnvironmentIdentity: envID}, opts)
		a.created = err == nil
	}
	if err == nil && a.resumed {
		if w := a.store.IntegrityWarning(); w != "" {
			fmt.Fprintf(a.io.stderr, "%s: warning: %s\n", programName, w)
		}
		if err = checkNotTruncated(a.store); err != nil {
			a.store.Close()
			a.store = nil
		}
	}
	return err
}

// finishRewind completes an interrupted rewind of the session before it
// is resumed (rewind_pending.go).
func (a *runner) finishRewind(path string) error {
	err := finishPendingRewind(context.Background(), path, a.io.getenv, a.io.stderr)
	if errors.Is(err, errRewindInProgress) {
		return fmt.Errorf("session %s is being rewound by another process; wait for it to finish", sessionLabel(path))
	}
	return err
}

// discardCreated removes the session file this process created when
// startup fails before anything but the header was written, so a failed
// start does not leave an empty session for --continue to pick.
func (a *runner) discardCreated() {
	if !a.created || a.store == nil || a.store.State().Facts > 0 || shellJournalled(a.store.Path()) {
		return
	}
	path := a.store.Path()
	_ = a.store.Close()
	a.store = nil
	_ = os.Remove(path)
	// What was kept beside it (a fork's origin, approval answers) belongs
	// to no session now.
	if dir, err := store.SidecarDir(path, false); err == nil && dir != "" {
		_ = os.RemoveAll(dir)
	}
}

// buildAgent wires the agent: its tools, its system prompt, the model
// client, the gates on effects, and where its events go.
func (a *runner) buildAgent(envID string) error {
	secretVars, all, err := a.buildTools(envID)
	if err != nil {
		return err
	}
	system, err := a.buildSystemPrompt(all)
	if err != nil {
		return err
	}
	client, err := a.buildClient(secretVars)
	if err != nil {
		return err
	}
	if err := a.buildGates(secretVars); err != nil {
		return err
	}
	log := a.agentLog()
	sinks := a.eventSinks()
	approve := a.embed.wrapApprove(a.mode.Hook(a.hookedApprove(approveHook(a.gate))))
	a.attachChildren(all, approve)
	a.watch = &configWatch{inner: provider.Retry(client, provider.RetryConfig{Endpoint: client.URL(), EndpointSource: endpointSource(a.io)})}
	a.agent, err = agent.New(agent.Config{
		Log:                 log,
		Provider:            a.watch,
		Tools:               all,
		Model:               a.model,
		SystemPrompt:        system,
		EnvironmentIdentity: envID,
		NewID:               func() string { return uuid.Must(uuid.NewV7()).String() },
		Events:              agent.Fanout(sinks...),
		AutoCompact:         a.autoCompact(client),
		Scrub:               a.scrubber(secretVars),
		Approve:             approve,
		Hooks:               a.permissionHooks(a.userHooks.agentHooks()),
		BeforeEffect:        a.checkpointHook(),
		ResultNote:          a.resultNote(),
		Identity:            a.wire.identity(),
		Reasoning:           a.reasoning,
		Images:              (&imageLoader{cwd: a.cwd}).images,
		MaxToolCalls:        a.flags.maxToolCalls,
		MaxParallel:         a.flags.maxParallel,
	})
	return err
}

// buildTools gathers the tools the model is offered (and the one !cmd
// runs through); it returns them with the variables that hold secrets,
// which commands never see.
func (a *runner) buildTools(envID string) (secretVars []string, all []tools.Tool, err error) {
	if err := a.trackProcesses(); err != nil {
		return nil, nil, err
	}
	bg, err := tools.NewManager(a.cwd)
	if err != nil {
		return nil, nil, err
	}
	a.bg = bg
	secretVars = []string{openRouterKeyVar, endpointKeyVar, anthropicKeyVar, openaiKeyVar, braveKeyVar}
	for _, sv := range a.servers {
		if sv.TokenEnv != "" {
			secretVars = append(secretVars, sv.TokenEnv)
		}
		secretVars = append(secretVars, sv.SecretVars...)
	}
	a.warnUnmaskable(secretVars)
	sealed, err := a.sealed()
	if err != nil {
		return nil, nil, fmt.Errorf("review's sealed sandbox: %w", err)
	}
	toolCfg := tools.Config{WorkDir: a.cwd, Plugins: a.tools, Background: bg, Env: withoutVars(os.Environ(), secretVars), Sandbox: a.sandbox, Procs: a.procs, Editor: a.embed.editor(), Transactions: a.transactions(), Review: a.reviewer(), Sealed: sealed}
	builtins, err := tools.Builtins(toolCfg)
	if err != nil {
		return nil, nil, err
	}
	// !cmd runs through a bash tool of its own, offered or not.
	toolCfg.Plugins = []string{"bash"}
	shell, err := tools.Builtins(toolCfg)
	if err != nil {
		return nil, nil, err
	}
	a.shellTool = shell[0]
	if a.lsp, err = a.newLSP(toolCfg.Env); err != nil {
		return nil, nil, err
	}
	all = builtins
	if !a.flags.noDiagnosticsTool {
		all = append(all, a.lsp.tools()...)
	}
	fetch, err := a.webFetchTools()
	if err != nil {
		return nil, nil, err
	}
	all = append(all, fetch...)
	all = append(all, a.webSearchTools()...)
	all = append(all, a.mcp.Tools()...)
	if all, err = a.withAgentTools(all, envID); err != nil {
		return nil, nil, err
	}
	return secretVars, a.planTools(all, toolCfg), nil
}

// buildSystemPrompt names the offered tools (the prompt lists them) and
// loads the skills.
func (a *runner) buildSystemPrompt(all []tools.Tool) (string, error) {
	names := make([]string, len(all))
	for i, t := range all {
		names[i] = t.Definition().Name
		a.toolNames = append(a.toolNames, displayName(t.Definition()))
	}
	system, skills, ins, err := systemPrompt(a.cwd, a.io.getenv("HOME"), names, a.flags.skills)
	if err != nil {
		return "", err
	}
	a.noteInstructions(ins)
	a.skills = skills
	return system, nil
}

// buildClient makes the model client; under an eval its HTTP client
// records or replays, keeping the secrets' values out of the recording.
func (a *runner) buildClient(secretVars []string) (*provider.Client, error) {
	httpClient, err := evalHTTPClient(a.io.getenv, secretVars)
	if err != nil {
		return nil, err
	}
	client, err := a.newClient(httpClient)
	if err != nil {
		return nil, fmt.Errorf("TINY_ENDPOINT: %w", err)
	}
	a.endpointShown = client.URL()
	return client, nil
}

// buildGates opens what stands between the model and effects: the
// reasoning store, the hooks and the approval gate.
func (a *runner) buildGates(secretVars []string) error {
	var err error
	if a.reasoning, err = a.openReasoning(); err != nil {
		return err
	}
	if err := a.setupHooks(secretVars); err != nil {
		return err
	}
	if a.gate, err = a.newGate(); err != nil {
		return err
	}
	return nil
}

// agentLog is the session log, seen through the hooks when they watch it.
func (a *runner) agentLog() agent.Log {
	var log agent.Log = a.store
	if a.hooks != nil && a.hooks.wrapLog != nil {
		log = a.hooks.wrapLog(log)
	}
	return log
}

// eventSinks says where the agent's events go: lifecycle telemetry, then
// the terminal UI, the one-shot printer or JSON lines on stdout, then the
// embedder and the hooks.
func (a *runner) eventSinks() []func(agent.Event) {
	sinks := []func(agent.Event){(&eventObserver{sessionID: func() string { return a.store.ID() }, sink: a.sink}).event}
	switch {
	case a.uiObserver != nil:
		// Recovery runs before the terminal UI starts; until then its tool
		// lines go to stderr.
		a.preUI = &gatedObserver{inner: ui.NewOneShot(ui.OneShotOptions{Stdout: a.io.stderr, Stderr: a.io.stderr, WorkDir: a.cwd, Getenv: a.io.getenv})}
		a.preUI.on.Store(true)
		sinks = append(sinks, a.uiObserver.Event, a.preUI.event, a.costs.event)
		a.costSink = a.costs.event
	case !a.flags.json:
		a.oneShot = ui.NewOneShot(ui.OneShotOptions{Stdout: a.io.stdout, Stderr: a.io.stderr, WorkDir: a.cwd, Getenv: a.io.getenv})
		costs := newCostLog(a.oneShot.Stderr())
		sinks = append(sinks, a.oneShot.Event, costs.event)
		a.costSink = costs.event
	default:
		// stdout carries the events; a wait for a retry still shows.
		sinks = append(sinks, retryLines(a.io.stderr))
	}
	return append(sinks, a.embed.eventSink(), a.hookEvents())
}

// operate resumes an open operation, then runs the prompt (one-shot) or the
// interactive loop.
func (a *runner) operate(ctx context.Context, promptText string) error {
	ctx, hardStop := context.WithCancel(ctx)
	defer hardStop()
	if a.oneShot != nil {
		defer a.oneShot.Close()
	}
	stop := a.onSignals(hardStop)
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()

	if a.agent.Pending() {
		res, err := a.agent.Resume(ctx)
		if errors.Is(err, context.Canceled) {
			return fmt.Errorf("stopped before the recovery finished; resume with: tiny-go --session %s", a.store.ID())
		}
		if err != nil {
			return fmt.Errorf("resume: %w", err)
		}
		if res.Blocked != "" {
			return errors.New(blockedMessage(a.store.ID(), res.Blocked))
		}
		if !a.flags.json {
			fmt.Fprintf(a.io.stderr, "Recovered the open %s: %s.\n", res.Kind, describeOutcome(res))
		}
		if promptText == "" && a.flags.json {
			return exitFor(res)
		}
	}
	if strings.TrimSpace(promptText) == "" && a.flags.json {
		return nil // resumed with nothing open
	}
	if strings.TrimSpace(promptText) == "" {
		// Interactive mode handles signals itself (the Ctrl+C path).
		stop()
		stopped = true
		a.exitReason = "prompt_input_exit"
		return a.interactive(ctx)
	}
	text, err := a.expand(promptText)
	if err != nil {
		return usageError{err}
	}
	res, err := a.run(ctx, text)
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("stopped before the run finished; resume with: tiny-go --session %s", a.store.ID())
	}
	if err != nil {
		return err
	}
	if a.oneShot != nil {
		a.oneShot.Finish(res)
	}
	discarded := a.discardConfigFailure()
	if !a.flags.json {
		switch {
		case res.Completion == session.CompletionTruncated:
			fmt.Fprintln(a.io.stderr, ui.TruncatedLine)
		case res.Outcome != session.OutcomeCompleted:
			fmt.Fprintln(a.io.stderr, describeOutcome(res))
		}
		if !discarded {
			a.printResume()
		}
	}
	return exitFor(res)
}

// expand turns "/skill:name text" (or "/name text" for a skill's name)
// into the skill's message, and puts the skill in use.
func (a *runner) expand(text string) (string, error) {
	text = skillShorthand(text, a.skills)
	msg, ok, err := prompt.ExpandSkill(text, a.skills)
	if err != nil {
		return "", err
	}
	if ok {
		name, _, _ := strings.Cut(strings.TrimPrefix(text, prompt.SkillCommandPrefix), " ")
		a.skillInUse(strings.TrimSpace(name))
		return msg, nil
	}
	return text, nil
}

// onSignals routes SIGINT, SIGTERM and SIGHUP into the abort path, by the
// interrupt policy: the abort intent is made durable, the active phase is
// signalled, and the driving goroutine reconciles and returns. A signal
// with nothing to abort, or one after the policy's grace while the abort
// is under way, stops the process at once (hardStop); whatever was in
// flight stays open for the next resume.
func (a *runner) onSignals(hardStop context.CancelFunc) (stop func()) {
	sigs, stopNotify := interrupt.Notify()
	done := make(chan struct{})
	go func() {
		var policy interrupt.Policy
		for {
			select {
			case <-sigs:
				switch policy.Interrupt(true) {
				case interrupt.Abort:
					ok, err := a.agent.Abort(context.Background())
					if err != nil {
						fmt.Fprintf(a.io.stderr, "tiny-go: abort: %v\n", err)
					}
					if !ok {
						hardStop()
					}
				case interrupt.Hold:
					fmt.Fprintln(a.io.stderr, interrupt.HoldHint)
				default:
					hardStop()
				}
			case <-done:
				return
			}
		}
	}()
	return func() {
		stopNotify()
		close(done)
	}
}

func (a *runner) printResume() {
	if a.resumable() {
		fmt.Fprintf(a.io.stderr, "Resume: tiny-go --session %s\n", a.store.ID())
	}
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
	a.sessionEnded(firstNonEmpty(a.exitReason, "other"))
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

func exitFor(res agent.Result) error {
	// A reply cut off while calling tools completed (nothing of it ran)
	// but did not do what was asked: like a cut-off text reply, non-zero.
	if res.Blocked != "" || res.Outcome != session.OutcomeCompleted || res.Completion == session.CompletionTruncated {
		return exitError{code: exitFailed}
	}
	return nil
}

// describeOutcome is the one-line summary of how an operation ended.
func describeOutcome(res agent.Result) string {
	switch {
	case res.Blocked != "":
		return "blocked: " + res.Blocked
	case res.Outcome == session.OutcomeAborted && res.Kind == session.OperationCompaction:
		return "Compaction aborted."
	case res.Outcome == session.OutcomeAborted:
		return "Aborted."
	case res.Outcome == session.OutcomeFailed && res.Error != nil:
		return "Failed: " + res.Error.Message
	case res.Outcome == session.OutcomeFailed:
		return "Failed."
	case res.Completion == session.CompletionTruncated:
		return "completed (the reply was cut off by the model token limit; its tool calls were not run)"
	}
	return "completed"
}

// blockedMessage explains a blocked resume and the ways out.
func blockedMessage(id, reason string) string {
	why := map[string]string{
		"configuration_changed":      "the provider, model, system prompt or tools differ from those the open step was started with",
		"environment_changed":        "a started tool ran in another environment (TINY_AGENT_ENVIRONMENT_IDENTITY or working directory)",
		"replay_declaration_changed": "a started tool was declared safe to replay but no longer is",
		"attempts_exhausted":         "the model request was already retried once",
	}[reason]
	return fmt.Sprintf("session %s is blocked (%s): %s. Restore the configuration it was started with and resume, or run: tiny-go session abort %s", id, reason, why, id)
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

func displayName(d tools.Definition) string {
	if d.Display != "" {
		return d.Display
	}
	return d.Name
}

// systemPrompt assembles the system message of cwd for the offered tools:
// base instructions, the instruction files (CLAUDE.md, AGENTS.md, ...;
// instructions.go) and the skill index.
func systemPrompt(cwd, home string, toolNames, skillFiles []string) (string, []prompt.Skill, *prompt.Instructions, error) {
	ins, err := prompt.ReadInstructions(cwd, home)
	if err != nil {
		return "", nil, nil, err
	}
	skills, skipped, err := prompt.DiscoverSkillsFrom(cwd, home, skillFiles)
	if err != nil {
		return "", nil, nil, err
	}
	ins.Problems = append(ins.Problems, skipped...)
	return prompt.System(prompt.Options{Cwd: cwd, Tools: toolNames, Instructions: ins.Files, Skills: skills}), skills, ins, nil
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// withoutVars is environ without the named variables: commands the model
// runs do not inherit tiny-go's credentials (so `env` cannot copy them into
// a tool result and the session file).
func withoutVars(environ, names []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, name) {
			out = append(out, kv)
		}
	}
	return out
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
