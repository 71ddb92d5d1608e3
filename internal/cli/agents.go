package cli

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
func (a *runner) withAgentTools(all []tools.Tool, envID string) ([]tools.Tool, error) {
	if !a.flags.agentTools {
		return all, nil
	}
	defs, problems := loadAgents(a.cwd)
	for _, p := range problems {
		fmt.Fprintln(a.io.stderr, "tiny-go: "+p)
	}
	a.kids = &children{a: a, defs: defs, envID: envID, maxDepth: maxAgentDepth(a.io.getenv)}
	parent := func() (string, string) { return a.store.Path(), a.store.ID() }
	return append(all, todo.Tool{}, agents.NewTool(defs, a.kids.runner(parent, 0))), nil
}

// attachChildren gives the children what they are built from once the
// parent's tools and approval hook are final.
func (a *runner) attachChildren(all []tools.Tool, approve agent.ApproveFunc) {
	if a.kids != nil {
		a.kids.tools, a.kids.approve, a.kids.readOnly = all, approve, a.readOnly
	}
}

func loadAgents(cwd string) ([]agents.Definition, []string) {
	home, _ := os.UserHomeDir()
	return agents.Load(agents.Dirs(cwd, home)...)
}

// agentToolsFor are the agent tools a run in cwd offers by default, as
// `session list` compares a session's configuration with them.
func agentToolsFor(cwd string) []tools.Tool {
	defs, _ := loadAgents(cwd)
	return []tools.Tool{todo.Tool{}, agents.NewTool(defs, nil)}
}
