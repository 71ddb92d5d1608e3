package cli

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
	"github.com/tiny-agent/tiny-go/internal/cli/sessionview"
	"github.com/tiny-agent/tiny-go/internal/session"
	"github.com/tiny-agent/tiny-go/internal/store"
	"github.com/tiny-agent/tiny-go/internal/ui"
)

// interactiveHost carries out the interactive commands that reach beyond
// the agent: /model, /status, /cost, /clear, /resume and !cmd.
type interactiveHost struct{ a *runner }

func (h interactiveHost) SetModel(id string) error {
	a := h.a
	if strings.ContainsAny(id, " \t\r\n") || id == "" {
		return errors.New("a model id is one word, such as anthropic/claude-sonnet-4.5")
	}
	if err := store.ReplaceSidecarFile(a.store.Path(), modelFile, []byte(id+"\n")); err != nil {
		return fmt.Errorf("cannot record it beside the session: %w", err)
	}
	ag, err := a.rebuiltAgent(func(cfg *agent.Config) {
		cfg.Model = id
		// A model that did not take images before may: send them again.
		cfg.Images = (&imageLoader{cwd: a.cwd}).images
	})
	if err != nil {
		return err
	}
	a.agent, a.model = ag, id
	return nil
}

func (h interactiveHost) Status() []string {
	a := h.a
	st := a.store.State()
	window := a.flags.contextWindow
	if window == 0 {
		a.costs.mu.Lock()
		window = a.costs.window // the footer's, from the last request
		a.costs.mu.Unlock()
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
	sandbox := a.flags.sandbox.mode
	if sandbox == "" {
		sandbox = "default"
	}
	network := a.flags.sandbox.network
	if network == "" {
		network = "on"
	}
	if network == "rules" && a.sandbox.NetworkRules() == nil {
		network = "rules, which could not be set up: no TCP for commands"
	}
	mcp := strings.Join(a.mcpAliases, ", ")
	if mcp == "" {
		mcp = "(none)"
	}
	return []string{
		"model: " + a.model,
		"provider: " + a.access.name,
		"endpoint: " + a.endpointShown,
		"session id: " + a.store.ID(),
		"session path: " + a.store.Path(),
		"window: " + share,
		"sandbox: " + sandbox + " (network " + network + ")",
		"approval: " + string(a.mode.Mode()),
		"mcp: " + mcp,
		a.webSearchStatus(),
		"instructions: " + instructionsLine(a.instructions),
	}
}

func (h interactiveHost) Cost() []string {
	u := h.a.store.State().Usage
	in := u.Input + u.CacheRead + u.CacheWrite
	line := fmt.Sprintf("this session: %d tokens in (%d cached), %d out", in, u.CacheRead, u.Output)
	return []string{line, "cost: " + h.a.costs.summary()}
}

// NewSession is /clear: a new session in the same directory with the same
// configuration; the previous one stays resumable (or goes, when it never
// got a prompt).
func (h interactiveHost) NewSession() (ui.Banner, error) {
	a := h.a
	st, err := store.Create(a.cwd, store.NewHeader{Provider: a.access.name, Model: a.model, EnvironmentIdentity: a.agent.Config().EnvironmentIdentity}, store.Options{Fsync: a.flags.fsync})
	if err != nil {
		return ui.Banner{}, err
	}
	drop := a.emptyCreated()
	a.userHooks.Ending("clear")
	if err := a.useStore(st); err != nil {
		_ = os.Remove(st.Path())
		return ui.Banner{}, err
	}
	drop()
	defer a.userHooks.Started(context.Background(), "clear")
	a.created, a.resumed = true, false
	a.costs.reset()
	return a.banner(), nil
}

func (h interactiveHost) Sessions() ([]ui.SessionChoice, error) {
	list, err := store.List(h.a.cwd)
	if err != nil {
		return nil, err
	}
	var out []ui.SessionChoice
	list, links := sessionview.NestSessions(list)
	for _, s := range list {
		if s.State == store.SummaryCorrupt || headerOnly(s) {
			continue
		}
		c := ui.SessionChoice{ID: s.ID, FirstPrompt: s.FirstPrompt, LastPrompt: s.LastPrompt, State: sessionview.SummaryState(s), Started: s.Started}
		if l, ok := links[s.ID]; ok {
			c.Origin = "└ " + childLabel(l)
		}
		out = append(out, c)
	}
	return out, nil
}

func (h interactiveHost) Resume(id string) (ui.Banner, []session.Message, error) {
	a := h.a
	if id == a.store.ID() {
		return ui.Banner{}, nil, errors.New("that is the current session")
	}
	st, err := store.Open(a.cwd, id, store.Options{Fsync: a.flags.fsync})
	if err != nil {
		return ui.Banner{}, nil, err
	}
	if st.State().Operation != nil {
		_ = st.Close()
		return ui.Banner{}, nil, fmt.Errorf("session %s has an open operation; exit and run: tiny-go --session %s", id, id)
	}
	drop := a.emptyCreated()
	a.userHooks.Ending("other")
	if err := a.useStore(st); err != nil {
		return ui.Banner{}, nil, err
	}
	drop()
	defer a.userHooks.Started(context.Background(), "resume")
	a.created, a.resumed = false, true
	a.costs.reset()
	if m := chosenModel(st.Path()); m != "" && m != a.model {
		_ = h.SetModel(m)
	}
	return a.banner(), recapOf(st.State()), nil
}

// banner is the interactive banner of the current session.
func (a *runner) banner() ui.Banner {
	return ui.Banner{
		Provider:    a.access.name,
		Endpoint:    a.endpointShown,
		Model:       a.model,
		SessionID:   a.store.ID(),
		SessionPath: a.store.Path(),
		Tools:       a.toolNames,
		MCP:         a.mcpAliases,
		Restored:    a.resumed,
	}
}

func (h interactiveHost) Shell(ctx context.Context, command string) (string, error) {
	a := h.a
	id := uuid.Must(uuid.NewV7()).String()
	path := a.store.Path()
	if err := appendShell(path, shellRecord{ID: id, State: "started", Command: command}); err != nil {
		return "", fmt.Errorf("!%s not run: cannot journal it beside the session: %w", command, err)
	}
	args, _ := json.Marshal(map[string]string{"command": command})
	res := a.runUserShell(ctx, id, jsontext.Value(args))
	out := res.Content
	if s := a.agent.Config().Scrub; s != nil {
		out = s.Scrub(out)
	}
	if err := appendShell(path, shellRecord{ID: id, State: "done", Command: command, Output: out, Failed: res.IsError}); err != nil {
		return out, fmt.Errorf("the output could not be journalled, so the model will not see it: %w", err)
	}
	return out, nil
}
