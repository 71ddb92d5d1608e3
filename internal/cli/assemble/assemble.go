// Package assemble is the one place an agent is put together from
// configuration, for every front end (New): configure
// resolves what can fail before a session exists, start attaches the
// session and connects the MCP servers, buildAgent wires tools, system
// prompt, model client, gates (hooks, approval, sandbox, checkpoints) and
// where events go.
package assemble

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/cli/guard"
	"github.com/tiny-agent/tiny-go/internal/cli/mcpcmd"
	"github.com/tiny-agent/tiny-go/internal/cli/modelwire"
	"github.com/tiny-agent/tiny-go/internal/cli/observe"
	"github.com/tiny-agent/tiny-go/internal/cli/promptwire"
	"github.com/tiny-agent/tiny-go/internal/cli/rewindcmd"
	"github.com/tiny-agent/tiny-go/internal/cli/sessionopen"
	"github.com/tiny-agent/tiny-go/internal/config"
	"github.com/tiny-agent/tiny-go/internal/eval"
	"github.com/tiny-agent/tiny-go/internal/lifecycle"
	"github.com/tiny-agent/tiny-go/internal/mcp"
	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/store"
	"github.com/tiny-agent/tiny-go/internal/tools"
	"github.com/tiny-agent/tiny-go/internal/ui"
)

// buildAgent wires the agent: its tools, its system prompt, the model
// client, the gates on effects, and where its events go.
func (a *Runner) buildAgent(envID string) error {
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
	approve := a.Embed.WrapApprove(a.Mode.Hook(a.UserHooks.Approve(guard.ApproveHook(a.Gate))))
	a.attachChildren(all, approve)
	a.Agent, err = agent.New(agent.Config{
		Log:                 log,
		Provider:            a.Wire.Watch(client),
		Tools:               all,
		Model:               a.Wire.Model,
		SystemPrompt:        system,
		EnvironmentIdentity: envID,
		NewID:               func() string { return uuid.Must(uuid.NewV7()).String() },
		Events:              agent.Fanout(sinks...),
		AutoCompact:         a.Wire.AutoCompact(client, a.Flags.ContextWindow, a.Flags.CompactShare),
		Scrub:               a.scrubber(secretVars),
		Approve:             approve,
		Hooks:               a.permissionHooks(a.UserHooks.Agent()),
		BeforeEffect:        a.CheckpointHook(),
		ResultNote:          a.ResultNote(),
		Identity:            a.Wire.Identity(),
		Reasoning:           a.Reasoning,
		Images:              (&promptwire.ImageLoader{Cwd: a.Cwd}).Images,
		MaxToolCalls:        a.Flags.MaxToolCalls,
		MaxParallel:         a.Flags.MaxParallel,
	})
	return err
}

// rebuiltAgent is the agent built again with its configuration changed
// (the model, images, the system prompt, added tools); the caller puts it
// in place between runs.
func (a *Runner) RebuiltAgent(change func(*agent.Config)) (*agent.Agent, error) {
	cfg := a.Agent.Config()
	change(&cfg)
	return agent.New(cfg)
}

// buildTools gathers the tools the model is offered (and the one !cmd
// runs through); it returns them with the variables that hold secrets,
// which commands never see.
func (a *Runner) buildTools(envID string) (secretVars []string, all []tools.Tool, err error) {
	if err := a.Guard.TrackProcesses(); err != nil {
		return nil, nil, err
	}
	bg, err := tools.NewManager(a.Cwd)
	if err != nil {
		return nil, nil, err
	}
	a.bg = bg
	secretVars = modelwire.SecretVars()
	for _, sv := range a.Servers {
		if sv.TokenEnv != "" {
			secretVars = append(secretVars, sv.TokenEnv)
		}
		secretVars = append(secretVars, sv.SecretVars...)
	}
	guard.WarnUnmaskable(a.IO.Stderr, a.IO.Getenv, secretVars)
	sealed, err := a.Guard.Sealed()
	if err != nil {
		return nil, nil, fmt.Errorf("review's sealed sandbox: %w", err)
	}
	toolCfg := tools.Config{WorkDir: a.Cwd, Plugins: a.tools, Background: bg, Env: withoutVars(os.Environ(), secretVars), Sandbox: a.Guard.Sandbox(), Procs: a.Guard.Procs(), Editor: a.Embed.editor(), Transactions: a.undo().Transactions(), Review: a.reviewer(), Sealed: sealed}
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
	if a.LSP, err = a.newLSP(toolCfg.Env); err != nil {
		return nil, nil, err
	}
	all = builtins
	if !a.Flags.NoDiagnosticsTool {
		all = append(all, a.LSP.Tools()...)
	}
	fetch, err := a.webFetchTools()
	if err != nil {
		return nil, nil, err
	}
	all = append(all, fetch...)
	all = append(all, a.Wire.WebSearchTools()...)
	all = append(all, a.MCP.Tools()...)
	if all, err = a.withAgentTools(all, envID); err != nil {
		return nil, nil, err
	}
	return secretVars, a.Guard.PlanTools(all, toolCfg, a.Mode.Planning), nil
}

// buildSystemPrompt names the offered tools (the prompt lists them) and
// loads the skills.
func (a *Runner) buildSystemPrompt(all []tools.Tool) (string, error) {
	names := make([]string, len(all))
	for i, t := range all {
		names[i] = t.Definition().Name
		a.ToolNames = append(a.ToolNames, displayName(t.Definition()))
	}
	system, skills, ins, err := promptwire.SystemPrompt(a.Cwd, a.IO.Getenv("HOME"), names, a.Flags.Skills)
	if err != nil {
		return "", err
	}
	a.Instructions = ins // for /status
	promptwire.ReportProblems(a.IO.Stderr, ins)
	a.Skills = skills
	return system, nil
}

// buildClient makes the model client; under an eval its HTTP client
// records or replays, keeping the secrets' values out of the recording.
func (a *Runner) buildClient(secretVars []string) (*provider.Client, error) {
	httpClient, err := evalHTTPClient(a.IO.Getenv, secretVars)
	if err != nil {
		return nil, err
	}
	client, err := a.Wire.NewClient(httpClient, modelwire.Timeouts{IdleTimeout: a.Flags.IdleTimeout, RequestTimeout: a.Flags.RequestTimeout})
	if err != nil {
		return nil, fmt.Errorf("TINY_ENDPOINT: %w", err)
	}
	return client, nil
}

// buildGates opens what stands between the model and effects: the
// reasoning store, the hooks and the approval gate.
func (a *Runner) buildGates(secretVars []string) error {
	var err error
	if a.Reasoning, err = a.Wire.OpenReasoning(a.Store.Path(), a.Flags.Fsync); err != nil {
		return err
	}
	if err := a.setupHooks(secretVars); err != nil {
		return err
	}
	if a.Gate, err = a.NewGate(); err != nil {
		return err
	}
	return nil
}

// agentLog is the session log, seen through the hooks when they watch it.
func (a *Runner) agentLog() agent.Log {
	var log agent.Log = a.Store
	if a.Hooks != nil && a.Hooks.WrapLog != nil {
		log = a.Hooks.WrapLog(log)
	}
	return log
}

// eventSinks says where the agent's events go: lifecycle telemetry, then
// the terminal UI, the one-shot printer or JSON lines on stdout, then the
// embedder and the hooks.
func (a *Runner) eventSinks() []func(agent.Event) {
	sinks := []func(agent.Event){(&observe.EventObserver{SessionID: func() string { return a.Store.ID() }, Sink: a.sink}).Event}
	switch {
	case a.UIObserver != nil:
		// Recovery runs before the terminal UI starts; until then its tool
		// lines go to stderr.
		a.PreUI = &observe.GatedObserver{Inner: ui.NewOneShot(ui.OneShotOptions{Stdout: a.IO.Stderr, Stderr: a.IO.Stderr, WorkDir: a.Cwd, Getenv: a.IO.Getenv})}
		a.PreUI.On.Store(true)
		sinks = append(sinks, a.UIObserver.Event, a.PreUI.Event, a.Costs.Event)
		a.costSink = a.Costs.Event
	case !a.Flags.JSON:
		a.OneShot = ui.NewOneShot(ui.OneShotOptions{Stdout: a.IO.Stdout, Stderr: a.IO.Stderr, WorkDir: a.Cwd, Getenv: a.IO.Getenv})
		costs := observe.NewCostLog(a.OneShot.Stderr())
		sinks = append(sinks, a.OneShot.Event, costs.Event)
		a.costSink = costs.Event
	default:
		// stdout carries the events; a wait for a retry still shows.
		sinks = append(sinks, observe.RetryLines(a.IO.Stderr))
	}
	return append(sinks, a.Embed.eventSink(), a.UserHooks.Events())
}

func displayName(d tools.Definition) string {
	if d.Display != "" {
		return d.Display
	}
	return d.Name
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

// start attaches the session, connects MCP servers and builds the agent,
// reporting startup events.
func (a *Runner) start(ctx context.Context) error {
	began := time.Now()
	startupStarted := false
	fail := func(errType string, err error) error {
		a.DiscardCreated()
		if !startupStarted {
			a.sink.Emit(lifecycle.StartupStarted(a.Wire.Model, a.tools, nonNilStrings(a.MCPAliases)).At(began))
		}
		a.sink.Emit(lifecycle.StartupCompleted(time.Since(began), lifecycle.Failed, errType))
		return err
	}

	envID, err := store.EnvironmentIdentity(a.Cwd, a.IO.Getenv)
	if err != nil {
		return fail("startup_setup_error", fmt.Errorf("environment identity: %w", err))
	}
	if err := a.attach(envID); err != nil {
		return fail("startup_setup_error", err)
	}
	// A resumed session keeps its model unless one is asked for, so that
	// resuming does not change the configuration by accident.
	if a.Resumed {
		a.Wire.Model = ResumeModel(a.Store.State(), FirstNonEmpty(a.Flags.Model, a.IO.Getenv("TINY_MODEL"), sessionopen.ChosenModel(a.Store.Path())))
	}
	a.sink.Emit(lifecycle.StartupStarted(a.Wire.Model, a.tools, nonNilStrings(a.MCPAliases)).At(began))
	startupStarted = true
	a.sink.Emit(lifecycle.SessionAttached(a.Store.ID(), a.Resumed))

	// Before the first stdio MCP server starts: its process group is
	// recorded there.
	if err := a.Guard.TrackProcesses(); err != nil {
		return fail("startup_setup_error", err)
	}
	mcpCtx, stopMCPSignals := cmdutil.Interruptible(ctx)
	defer stopMCPSignals()
	mcpOpts := mcpcmd.Options(a.Cwd, a.IO.mcp(), a.Servers, a.Guard.Sandbox(), a.Guard.Procs(), a.UIObserver)
	if a.Embed != nil {
		mcpOpts.Elicit = a.Embed.elicit // forms go to the editor (ACP)
	}
	for _, s := range a.Servers {
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
				fmt.Fprintf(a.IO.Stderr, "%s: MCP %s: not used: %v (tiny-go mcp list shows the servers)\n", cmdutil.ProgramName, s.Alias, err)
				a.MCPAliases = slices.DeleteFunc(a.MCPAliases, func(x string) bool { return x == s.Alias })
				continue
			}
			return fail("mcp_setup_error", err)
		}
		a.MCP = append(a.MCP, c)
		a.sink.Emit(lifecycle.MCPConnected(s.Alias, time.Since(t0), c.Protocol(), len(c.Tools())))
		if !a.Flags.JSON {
			fmt.Fprintln(a.IO.Stderr, c.StartupLine())
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
func (a *Runner) attach(envID string) error {
	opts := store.Options{Fsync: a.Flags.Fsync}
	var err error
	switch {
	case a.Flags.Session != "":
		if path, perr := store.PathByID(a.Cwd, a.Flags.Session); perr == nil {
			if err := a.finishRewind(path); err != nil {
				return err
			}
		}
		a.Store, err = store.Open(a.Cwd, a.Flags.Session, opts)
		a.Resumed = true
	case a.Flags.Cont:
		a.Store, err = sessionopen.OpenNewest(a.Cwd, opts, a.finishRewind)
		a.Resumed = true
	default:
		a.Store, err = store.Create(a.Cwd, store.NewHeader{Provider: a.Wire.Access.Name, Model: a.Wire.Model, EnvironmentIdentity: envID}, opts)
		a.Created = err == nil
	}
	if err == nil && a.Resumed {
		if w := a.Store.IntegrityWarning(); w != "" {
			fmt.Fprintf(a.IO.Stderr, "%s: warning: %s\n", cmdutil.ProgramName, w)
		}
		if err = a.checkNotTruncated(); err != nil {
			a.Store.Close()
			a.Store = nil
		}
	}
	return err
}

// finishRewind completes an interrupted rewind of the session before it
// is resumed (rewindcmd.FinishPending).
func (a *Runner) finishRewind(path string) error {
	err := rewindcmd.FinishPending(context.Background(), path, a.IO.Getenv, a.IO.Stderr)
	if errors.Is(err, rewindcmd.ErrInProgress) {
		return fmt.Errorf("session %s is being rewound by another process; wait for it to finish", rewindcmd.SessionLabel(path))
	}
	return err
}

// discardCreated removes the session file this process created when
// startup fails before anything but the header was written, so a failed
// start does not leave an empty session for --continue to pick.
func (a *Runner) DiscardCreated() {
	if !a.Created || a.Store == nil || !sessionopen.Empty(a.Store) {
		return
	}
	path := a.Store.Path()
	_ = a.Store.Close()
	a.Store = nil
	_ = os.Remove(path)
	// What was kept beside it (a fork's origin, approval answers) belongs
	// to no session now.
	if dir, err := store.SidecarDir(path, false); err == nil && dir != "" {
		_ = os.RemoveAll(dir)
	}
}

// Options is what a front end asks of its agent: the configuration
// (streams and settings, flags, working directory) and how the front end
// shows and embeds it.
type Options struct {
	IO    Stdio
	Flags Flags
	Cwd   string
	Hooks *TestHooks
	// interactive shows progress in the terminal UI; embed adapts the
	// agent to an editor (ACP) or the SDK's driver (headless).
	Interactive bool
	Embed       *Embedding
	// mode is the approval mode an editor switches (nil: the runner's).
	Mode *approval.Switch
	// beforeStart runs once the configuration is resolved, before a
	// session is attached (headless: resume or fork).
	BeforeStart func(*Runner) error
	// sink observes startup and the agent's lifecycle (nil: none).
	Sink func() *lifecycle.Tracker
}

// New puts an agent together from configuration, the one way every
// front end does it (interactive, one-shot, headless, ACP): it resolves the
// configuration, attaches the session, connects the MCP servers and builds
// the agent with its provider, tools, hooks, language servers, approval,
// sandbox, checkpoints and observers. Subagents are built by the
// assembled runner's children (internal/cli/subagents) on its provider,
// hooks and tools (childAgent);
// a fleet worker and an eval run tiny-go itself, so they come here too.
// The caller closes the runner; a runner that failed to start is closed.
func New(ctx context.Context, s Options) (*Runner, error) {
	r := &Runner{IO: s.IO, Flags: s.Flags, Cwd: s.Cwd, Hooks: s.Hooks, Embed: s.Embed}
	if s.Interactive {
		r.UIObserver = ui.NewObserver(s.Cwd)
	}
	if err := r.configure(); err != nil {
		return nil, err
	}
	if s.Mode != nil {
		r.Mode = s.Mode
	}
	if s.BeforeStart != nil {
		if err := s.BeforeStart(r); err != nil {
			return nil, err
		}
	}
	if s.Sink != nil {
		r.sink = s.Sink()
	} else {
		r.sink = lifecycle.NewTracker(lifecycle.Multi())
	}
	if err := r.start(ctx); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// configure resolves everything that can fail before a session file is
// created: the working directory, plugins, MCP servers and credentials.
func (a *Runner) configure() error {
	abs, err := filepath.Abs(a.Cwd)
	if err != nil {
		return cmdutil.UsageErrorf("--cwd: %v", err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return cmdutil.UsageErrorf("--cwd: %s is not a directory", abs)
	}
	a.Cwd = abs
	if a.Flags.MaxToolCalls < 1 {
		return cmdutil.UsageErrorf("--max-tool-calls must be at least 1")
	}
	if err := a.configureGuard(); err != nil {
		return err
	}
	if a.tools, err = tools.Select(a.Flags.Plugins); err != nil {
		return cmdutil.UsageError{Err: err}
	}
	if a.Servers, err = mcpcmd.Select(a.Flags.MCP, a.IO.mcp(), a.Cwd); err != nil {
		return cmdutil.UsageError{Err: err}
	}
	if len(a.Flags.MCP) == 0 {
		a.Servers, a.mcpAuto = mcpcmd.AutoServers(a.IO.mcp(), a.Cwd, a.UIObserver != nil && !a.Flags.JSON && a.Embed == nil)
	}
	var secretVars []string
	for _, sv := range a.Servers {
		a.MCPAliases = append(a.MCPAliases, sv.Alias)
		secretVars = append(secretVars, sv.SecretVars...)
	}
	// The variables the servers' headers and oauth settings name are
	// secrets too (as tokenEnv).
	a.IO.conceal(secretVars)
	if a.Wire, err = modelwire.New(modelwire.Options{Getenv: a.IO.Getenv, Flags: a.Flags.ProviderFlags, Model: a.Flags.Model,
		NoWebSearch: a.Flags.NoWebSearch, EndpointSource: a.IO.SettingSource(config.Endpoint)}); err != nil {
		return err
	}
	if a.Flags.ContextWindow == 0 {
		if v := a.IO.Getenv("TINY_CONTEXT_WINDOW"); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 {
				return cmdutil.UsageErrorf("TINY_CONTEXT_WINDOW must be a positive integer")
			}
			a.Flags.ContextWindow = n
		}
	}
	if a.Flags.CompactShare == 0 {
		a.Flags.CompactShare = DefaultCompactShare
		if v := a.IO.Getenv("TINY_COMPACT_SHARE"); v != "" {
			s, err := strconv.ParseFloat(v, 64)
			if err != nil || s <= 0 || s > 1 {
				return cmdutil.UsageErrorf("TINY_COMPACT_SHARE must be a number in (0, 1]")
			}
			a.Flags.CompactShare = s
		}
	}
	if a.Flags.IdleTimeout == 0 {
		if v := a.IO.Getenv("TINY_IDLE_TIMEOUT"); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return cmdutil.UsageErrorf("TINY_IDLE_TIMEOUT must be a positive duration such as 90s")
			}
			a.Flags.IdleTimeout = d
		}
	}
	if a.Flags.RequestTimeout, err = modelwire.RequestTimeout(a.Flags.RequestTimeout, a.IO.Getenv); err != nil {
		return err
	}
	if a.Flags.IdleTimeout < 0 {
		return cmdutil.UsageErrorf("--idle-timeout must be a positive duration such as 90s")
	}
	if a.Flags.CompactShare <= 0 || a.Flags.CompactShare > 1 {
		return cmdutil.UsageErrorf("--compact-share must be a number in (0, 1]")
	}
	// Last: nothing after it may fail, so the sandbox is always closed.
	return a.Guard.OpenSandbox()
}

// evalHTTPClient is the model HTTP client of a tiny-go process that an eval
// started (recording, replaying or counting its requests); nil otherwise.
func evalHTTPClient(getenv func(string) string, secretVars []string) (*http.Client, error) {
	var secrets []string
	for _, name := range secretVars {
		if v := getenv(name); v != "" {
			secrets = append(secrets, v)
		}
	}
	return eval.ChildHTTPClient(getenv, secrets)
}
