// The agent's assembly for a run: tools, system prompt, model client, gates
// and where events go (buildAgent and its parts).

package cli

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/prompt"
	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/tools"
	"github.com/tiny-agent/tiny-go/internal/ui"
)

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
		ResultNote:          a.lsp.note(),
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
	secretVars = []string{openRouterKeyVar, endpointKeyVar, anthropicKeyVar, openaiKeyVar}
	for _, sv := range a.servers {
		if sv.TokenEnv != "" {
			secretVars = append(secretVars, sv.TokenEnv)
		}
		secretVars = append(secretVars, sv.SecretVars...)
	}
	a.warnUnmaskable(secretVars)
	toolCfg := tools.Config{WorkDir: a.cwd, Plugins: a.tools, Background: bg, Env: withoutVars(os.Environ(), secretVars), Sandbox: a.sandbox, Procs: a.procs, Editor: a.embed.editor(), Transactions: a.transactions(), Review: a.reviewer()}
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
