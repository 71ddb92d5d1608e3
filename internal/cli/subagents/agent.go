package subagents

import (
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/agents"
	"github.com/tiny-agent/tiny-go/internal/hooks"
	"github.com/tiny-agent/tiny-go/internal/planmode"
	"github.com/tiny-agent/tiny-go/internal/store"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// agent builds the child's agent: only the tools its definition lists
// (never task, unless the depth limit allows), its body as the system
// prompt, progress shown as whole lines under the parent's call. Build
// adds what the parent's agent is built on.
func (c *Children) agent(st *store.Store, depth int, d agents.Definition, hr *hooks.Runner) (*agent.Agent, error) {
	var ts []tools.Tool
	for _, t := range c.tools {
		name := t.Definition().Name
		if name == agents.ToolName || !d.Offers(name) {
			continue
		}
		ts = append(ts, t)
	}
	if d.ReadOnlyBash {
		ts = planmode.Wrap(ts, planmode.Config{Planning: func() bool { return true }, ReadOnlyBash: c.readOnly})
	}
	if depth+1 < c.cfg.MaxDepth && d.MayDelegate() {
		path, id := st.Path(), st.ID()
		ts = append(ts, agents.NewTool(c.cfg.Defs, c.runner(func() (string, string) { return path, id }, depth+1)))
	}
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Definition().Name
	}
	system := d.Prompt + "\n\nWorking directory: " + c.cfg.Cwd + "\nTools offered to you: " + strings.Join(names, ", ") + "."
	label := d.Name
	return c.cfg.Build(agent.Config{
		Log:                 st,
		Tools:               ts,
		Model:               c.model(d),
		SystemPrompt:        system,
		EnvironmentIdentity: c.cfg.EnvID,
		NewID:               func() string { return uuid.Must(uuid.NewV7()).String() },
		Events:              func(ev agent.Event) { c.show(label, ev); c.rollUp(ev) },
		Approve:             c.serialApprove(label + " subagent"),
		Hooks:               agentHooks(hr),
	})
}

// agentHooks is hr as the agent's hooks: a nil runner is no hooks (not a
// non-nil interface holding nil).
func agentHooks(hr *hooks.Runner) agent.HookRunner {
	if hr == nil {
		return nil
	}
	return hr
}

// knownTools refuses an agent whose tools list names only tools this
// session does not have, as Claude Code refuses to start it (an empty list
// is an agent without tools, which runs).
func (c *Children) knownTools(d agents.Definition) error {
	if len(d.Tools) == 0 {
		return nil
	}
	for _, t := range c.tools {
		if d.Offers(t.Definition().Name) {
			return nil
		}
	}
	return fmt.Errorf("none of its tools (%s) exists in this session; fix the tools line of %s", strings.Join(d.Tools, ", "), d.Path)
}
