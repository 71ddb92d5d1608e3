package interactive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/uuid"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/cli/assemble"
	"github.com/tiny-agent/tiny-go/internal/cli/promptwire"
	"github.com/tiny-agent/tiny-go/internal/cli/sessionopen"
	"github.com/tiny-agent/tiny-go/internal/cli/sessionview"
	"github.com/tiny-agent/tiny-go/internal/cli/subagents"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/store"
	"github.com/tiny-agent/tiny-go/internal/ui"
)

// interactiveHost carries out the interactive commands that reach beyond
// the agent: /model, /status, /cost, /clear, /resume and !cmd.
type Host struct{ a *runner }

func (h Host) SetModel(id string) error {
	a := h.a
	if strings.ContainsAny(id, " \t\r\n") || id == "" {
		return errors.New("a model id is one word, such as anthropic/claude-sonnet-4.5")
	}
	if err := store.ReplaceSidecarFile(a.Store.Path(), sessionopen.ModelFile, []byte(id+"\n")); err != nil {
		return fmt.Errorf("cannot record it beside the session: %w", err)
	}
	ag, err := a.RebuiltAgent(func(cfg *agent.Config) {
		cfg.Model = id
		// A model that did not take images before may: send them again.
		cfg.Images = (&promptwire.ImageLoader{Cwd: a.Cwd}).Images
	})
	if err != nil {
		return err
	}
	a.Agent, a.Wire.Model = ag, id
	return nil
}

func (h Host) Status() []string {
	a := h.a
	st := a.Store.State()
	window := a.Flags.ContextWindow
	if window == 0 {
		a.Costs.Mu.Lock()
		window = a.Costs.Window // the footer's, from the last request
		a.Costs.Mu.Unlock()
	}
	share := "unknown (no reply yet)"
	u := st.LastAssistantUsage
	if p := u.Input + u.CacheRead + u.CacheWrite; p > 0 {
		if window > 0 {
			share = fmt.Sprintf("%d%% of %d tokens", p*100/window, window)
		} else {
			share = fmt.Sprintf("%d tokens in the last prompt (window unknown)", p)
		}
	}
	sandbox := a.Flags.Sandbox.Mode
	if sandbox == "" {
		sandbox = "default"
	}
	network := a.Flags.Sandbox.Network
	if network == "" {
		network = "on"
	}
	if network == "rules" && a.Guard.Sandbox().NetworkRules() == nil {
		network = "rules, which could not be set up: no TCP for commands"
	}
	mcp := strings.Join(a.MCPAliases, ", ")
	if mcp == "" {
		mcp = "(none)"
	}
	return []string{
		"model: " + a.Wire.Model,
		"provider: " + a.Wire.Access.Name,
		"endpoint: " + a.Wire.EndpointShown,
		"session id: " + a.Store.ID(),
		"session path: " + a.Store.Path(),
		"window: " + share,
		"sandbox: " + sandbox + " (network " + network + ")",
		"approval: " + string(a.Mode.Mode()),
		"mcp: " + mcp,
		a.Wire.WebSearchStatus(),
		"instructions: " + promptwire.InstructionsLine(a.Instructions),
	}
}

func (h Host) Cost() []string {
	u := h.a.Store.State().Usage
	in := u.Input + u.CacheRead + u.CacheWrite
	line := fmt.Sprintf("this session: %d tokens in (%d cached), %d out", in, u.CacheRead, u.Output)
	return []string{line, "cost: " + h.a.Costs.Summary()}
}

// NewSession is /clear: a new session in the same directory with the same
// configuration; the previous one stays resumable (or goes, when it never
// got a prompt).
func (h Host) NewSession() (ui.Banner, error) {
	a := h.a
	st, err := store.Create(a.Cwd, store.NewHeader{Provider: a.Wire.Access.Name, Model: a.Wire.Model, EnvironmentIdentity: a.Agent.Config().EnvironmentIdentity}, store.Options{Fsync: a.Flags.Fsync})
	if err != nil {
		return ui.Banner{}, err
	}
	drop := sessionopen.EmptyCreated(a.Created, a.Store)
	a.UserHooks.Ending("clear")
	if err := a.useStore(st); err != nil {
		_ = os.Remove(st.Path())
		return ui.Banner{}, err
	}
	drop()
	defer a.UserHooks.Started(context.Background(), "clear")
	a.Created, a.Resumed = true, false
	a.Costs.Reset()
	return a.banner(), nil
}

func (h Host) Sessions() ([]ui.SessionChoice, error) {
	list, err := store.List(h.a.Cwd)
	if err != nil {
		return nil, err
	}
	var out []ui.SessionChoice
	list, links := sessionview.NestSessions(list)
	for _, s := range list {
		if s.State == store.SummaryCorrupt || assemble.HeaderOnly(s) {
			continue
		}
		c := ui.SessionChoice{ID: s.ID, FirstPrompt: s.FirstPrompt, LastPrompt: s.LastPrompt, State: sessionview.SummaryState(s), Started: s.Started}
		if l, ok := links[s.ID]; ok {
			c.Origin = "└ " + subagents.ChildLabel(l)
		}
		out = append(out, c)
	}
	return out, nil
}

func (h Host) Resume(id string) (ui.Banner, []session.Message, error) {
	a := h.a
	if id == a.Store.ID() {
		return ui.Banner{}, nil, errors.New("that is the current session")
	}
	st, err := store.Open(a.Cwd, id, store.Options{Fsync: a.Flags.Fsync})
	if err != nil {
		return ui.Banner{}, nil, err
	}
	if st.State().Operation != nil {
		_ = st.Close()
		return ui.Banner{}, nil, fmt.Errorf("session %s has an open operation; exit and run: tiny-go --session %s", id, id)
	}
	drop := sessionopen.EmptyCreated(a.Created, a.Store)
	a.UserHooks.Ending("other")
	if err := a.useStore(st); err != nil {
		return ui.Banner{}, nil, err
	}
	drop()
	defer a.UserHooks.Started(context.Background(), "resume")
	a.Created, a.Resumed = false, true
	a.Costs.Reset()
	if m := sessionopen.ChosenModel(st.Path()); m != "" && m != a.Wire.Model {
		_ = h.SetModel(m)
	}
	return a.banner(), RecapOf(st.State()), nil
}

// banner is the interactive banner of the current session.
func (a *runner) banner() ui.Banner {
	return ui.Banner{
		Provider:    a.Wire.Access.Name,
		Endpoint:    a.Wire.EndpointShown,
		Model:       a.Wire.Model,
		SessionID:   a.Store.ID(),
		SessionPath: a.Store.Path(),
		Tools:       a.ToolNames,
		MCP:         a.MCPAliases,
		Restored:    a.Resumed,
	}
}

func (h Host) Shell(ctx context.Context, command string) (string, error) {
	a := h.a
	id := uuid.Must(uuid.NewV7()).String()
	path := a.Store.Path()
	if err := sessionopen.AppendShell(path, sessionopen.ShellRecord{ID: id, State: "started", Command: command}); err != nil {
		return "", fmt.Errorf("!%s not run: cannot journal it beside the session: %w", command, err)
	}
	args, _ := json.Marshal(map[string]string{"command": command})
	res := a.RunUserShell(ctx, id, jsontext.Value(args))
	out := res.Content
	if s := a.Agent.Config().Scrub; s != nil {
		out = s.Scrub(out)
	}
	if err := sessionopen.AppendShell(path, sessionopen.ShellRecord{ID: id, State: "done", Command: command, Output: out, Failed: res.IsError}); err != nil {
		return out, fmt.Errorf("the output could not be journalled, so the model will not see it: %w", err)
	}
	return out, nil
}
