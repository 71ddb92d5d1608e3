package assemble

import (
	"fmt"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/cli/subagents"
	"github.com/tiny-agent/tiny-go/internal/hooks"
	"github.com/tiny-agent/tiny-go/internal/todo"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// withAgentTools adds todo_write and task to the offered tools, unless
// --agent-tools=false. Agent files that cannot be used are reported, one
// line each, and left out.
func (a *Runner) withAgentTools(all []tools.Tool, envID string) ([]tools.Tool, error) {
	if !a.Flags.AgentTools {
		return all, nil
	}
	defs, problems := subagents.Load(a.Cwd)
	for _, p := range problems {
		fmt.Fprintln(a.IO.Stderr, "tiny-go: "+p)
	}
	a.Kids = subagents.New(subagents.Config{
		Defs: defs, Cwd: a.Cwd, Fsync: a.Flags.Fsync, Provider: a.Wire.Access.Name, EnvID: envID,
		MaxDepth: subagents.MaxDepth(a.IO.Getenv),
		Model:    func() string { return a.Wire.Model },
		Parent:   func() (string, string) { return a.Store.Path(), a.Store.ID() },
		Hooks: func(id, path, agentType string) (*hooks.Runner, error) {
			return a.UserHooks.Child(id, path, agentType)
		},
		Line: a.childLine,
		Cost: func(ev agent.Event) {
			if a.costSink != nil {
				a.costSink(ev)
			}
		},
		Build: a.childAgent,
	})
	return append(all, todo.Tool{}, a.Kids.Tool()), nil
}

// attachChildren gives the children what they are built from once the
// parent's tools and approval hook are final.
func (a *Runner) attachChildren(all []tools.Tool, approve agent.ApproveFunc) {
	if a.Kids != nil {
		a.Kids.Attach(all, approve, a.Guard.ReadOnly())
	}
}

// childAgent builds a subagent's agent on the parent's provider, secret
// scrubbing, permission rules, protocol and tool-call limit.
func (a *Runner) childAgent(cfg agent.Config) (*agent.Agent, error) {
	cfg.Provider = a.Wire.Provider()
	cfg.Scrub = a.scrubber(nil)
	cfg.Hooks = a.permissionHooks(cfg.Hooks)
	cfg.Identity = a.Wire.Identity()
	cfg.MaxToolCalls = a.Flags.MaxToolCalls
	return agent.New(cfg)
}

// childLine shows a line of a subagent's progress: in the terminal above
// the live area, else on stderr (not with --json, whose stdout carries
// the parent's events).
func (a *Runner) childLine(line string) {
	if a.UIObserver.Line(line) {
		return
	}
	if p := a.progress(); p != nil {
		p.Line(line)
	}
}
