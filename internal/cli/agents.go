package cli

import (
	"github.com/tiny-agent/tiny-go/internal/todo"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// withAgentTools adds todo_write and task to the offered tools, unless
// --agent-tools=false.
func (a *runner) withAgentTools(all []tools.Tool) ([]tools.Tool, error) {
	if !a.flags.agentTools {
		return all, nil
	}
	return append(all, agentToolsFor(a.cwd)...), nil
}

// agentToolsFor are the agent tools a run in cwd offers by default.
func agentToolsFor(cwd string) []tools.Tool {
	return []tools.Tool{todo.Tool{}}
}
