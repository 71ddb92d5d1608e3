package assemble

import (
	"fmt"
	"os"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/agents"
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
	defs, problems := LoadAgents(a.Cwd)
	for _, p := range problems {
		fmt.Fprintln(a.IO.Stderr, "tiny-go: "+p)
	}
	a.Kids = &children{a: a, Defs: defs, envID: envID, maxDepth: maxAgentDepth(a.IO.Getenv)}
	parent := func() (string, string) { return a.Store.Path(), a.Store.ID() }
	return append(all, todo.Tool{}, agents.NewTool(defs, a.Kids.runner(parent, 0))), nil
}

// attachChildren gives the children what they are built from once the
// parent's tools and approval hook are final.
func (a *Runner) attachChildren(all []tools.Tool, approve agent.ApproveFunc) {
	if a.Kids != nil {
		a.Kids.tools, a.Kids.approve, a.Kids.readOnly = all, approve, a.Guard.ReadOnly()
	}
}

func LoadAgents(cwd string) ([]agents.Definition, []string) {
	home, _ := os.UserHomeDir()
	return agents.Load(agents.Dirs(cwd, home)...)
}

// agentToolsFor are the agent tools a run in cwd offers by default, as
// `session list` compares a session's configuration with them.
func AgentToolsFor(cwd string) []tools.Tool {
	defs, _ := LoadAgents(cwd)
	return []tools.Tool{todo.Tool{}, agents.NewTool(defs, nil)}
}
