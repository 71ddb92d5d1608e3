package cli

import (
	"strings"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/cli/assemble"
	"github.com/tiny-agent/tiny-go/internal/cli/lspcmd"
	"github.com/tiny-agent/tiny-go/internal/cli/modelwire"
	"github.com/tiny-agent/tiny-go/internal/cli/promptwire"
	"github.com/tiny-agent/tiny-go/internal/cli/subagents"
	"github.com/tiny-agent/tiny-go/internal/recovery"
	"github.com/tiny-agent/tiny-go/internal/store"
	"github.com/tiny-agent/tiny-go/internal/tools"
)

// newResumeCheck is the BlockedCheck of `session list`: built here, where
// the default configuration (tools, system prompt, model) is assembled.
func newResumeCheck(cwd string, getenv func(string) string) func(store.Summary) string {
	c := &resumeCheck{cwd: cwd, getenv: getenv}
	return c.blocked
}

// resumeCheck tells whether an open session would be blocked if resumed
// here with the default configuration (all built-in tools, no MCP, the
// model a resume would pick). The tools and the system
// prompt are built once per listing, on the first open session.
type resumeCheck struct {
	cwd    string
	getenv func(string) string

	ready  bool
	failed bool
	envID  string
	tools  []tools.Tool
	system string
}

func (c *resumeCheck) init() bool {
	if c.ready {
		return !c.failed
	}
	c.ready, c.failed = true, true
	envID, err := store.EnvironmentIdentity(c.cwd, c.getenv)
	if err != nil {
		return false
	}
	bg, err := tools.NewManager(c.cwd)
	if err != nil {
		return false
	}
	builtins, err := tools.Builtins(tools.Config{WorkDir: c.cwd, Background: bg})
	if err != nil {
		return false
	}
	builtins = append(builtins, lspcmd.DefaultTools(c.getenv)...)
	builtins = append(builtins, modelwire.DefaultWebFetchTools()...)
	// As a run with the default --agent-tools offers them.
	builtins = append(builtins, subagents.AgentTools(c.cwd)...)
	names := make([]string, len(builtins))
	for i, t := range builtins {
		names[i] = t.Definition().Name
	}
	system, _, _, err := promptwire.SystemPrompt(c.cwd, c.getenv("HOME"), names, nil)
	if err != nil {
		return false
	}
	c.envID, c.tools, c.system, c.failed = envID, builtins, system, false
	return true
}

// blocked returns the planner's reason, or "" when s is not open or would
// resume.
func (c *resumeCheck) blocked(s store.Summary) string {
	if s.Open == nil || !c.init() {
		return ""
	}
	model := assemble.ResumeModel(s.Open, strings.TrimSpace(c.getenv("TINY_MODEL")))
	current, err := agent.CurrentConfiguration(modelwire.IdentityFromEnv(c.getenv), model, c.system, c.envID, c.tools)
	if err != nil {
		return ""
	}
	if b, ok := recovery.Plan(s.Open, current).(recovery.Blocked); ok {
		return string(b.Reason)
	}
	return ""
}
