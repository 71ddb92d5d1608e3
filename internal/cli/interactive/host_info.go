package interactive

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/agents"
	"github.com/tiny-agent/tiny-go/internal/approval"
	"github.com/tiny-agent/tiny-go/internal/cli/cmdutil"
	"github.com/tiny-agent/tiny-go/internal/cli/guard"
	"github.com/tiny-agent/tiny-go/internal/cli/hookwire"
	"github.com/tiny-agent/tiny-go/internal/cli/subagents"
	"github.com/tiny-agent/tiny-go/internal/mcp"
	"github.com/tiny-agent/tiny-go/internal/todo"
)

// Info answers /agents, /todos, /mcp, /hooks and /permissions with the
// session's state (ui.InfoHost).
func (h Host) Info(name string) []string {
	a := h.a
	switch name {
	case "agents":
		return a.agentsInfo()
	case "todos":
		return todosInfo(todo.FromState(a.Store.State()))
	case "mcp":
		return mcpInfo(a.Servers, a.MCP)
	case "hooks":
		return a.hooksInfo()
	case "permissions":
		return a.permissionsInfo()
	}
	return []string{"/" + name + ": no such command"}
}

// agentsInfo lists the subagent types the task tool offers, then the
// subagents this session started.
func (a *runner) agentsInfo() []string {
	var defs []agents.Definition
	if a.Kids != nil {
		defs = a.Kids.Definitions()
	} else {
		defs, _ = subagents.Load(a.Cwd)
	}
	lines := []string{"Subagents the model can start (task tool; .claude/agents/*.md adds more):"}
	for _, d := range defs {
		from := "built-in"
		if d.Path != "" {
			from = d.Path
		}
		lines = append(lines, fmt.Sprintf("  %-12s %s · %s", d.Name, from, cmdutil.OneLine(d.Description)))
	}
	kids, err := agents.Children(a.Store.Path())
	switch {
	case err != nil:
		lines = append(lines, "This session's subagents: cannot be read: "+err.Error())
	case len(kids) == 0:
		lines = append(lines, "This session has started no subagent yet.")
	default:
		lines = append(lines, "This session's subagents (tiny-go session show <id>):")
		for _, k := range kids {
			lines = append(lines, "  "+subagents.ShortID(k.Child)+"  "+k.Agent+": "+cmdutil.OneLine(k.Description))
		}
	}
	return lines
}

// todosInfo is the todo list, or what makes one.
func todosInfo(l todo.List) []string {
	if len(l) == 0 {
		return []string{"No todo list in this session: the model keeps one (todo_write) for work of several steps."}
	}
	done := 0
	for _, it := range l {
		if it.Status == todo.Completed {
			done++
		}
	}
	return append([]string{fmt.Sprintf("Todos (%d of %d done):", done, len(l))}, todo.Lines(l)...)
}

// mcpInfo names each configured server: connected with its tools, or
// left out.
func mcpInfo(servers []mcp.Server, clients mcp.Clients) []string {
	if len(servers) == 0 {
		return []string{"No MCP servers. Add one with: tiny-go mcp add <name> -- <command> [args…] (or a .mcp.json in the project)."}
	}
	connected := map[string]*mcp.Client{}
	for _, c := range clients {
		if c != nil {
			connected[c.Alias()] = c
		}
	}
	lines := []string{"MCP servers (tiny-go mcp list checks each):"}
	for _, s := range servers {
		c, ok := connected[s.Alias]
		if !ok {
			lines = append(lines, "  "+s.Alias+": not connected, its tools are not offered (see the startup message)")
			continue
		}
		var names []string
		for _, t := range c.Tools() {
			names = append(names, t.Definition().Name)
		}
		lines = append(lines, fmt.Sprintf("  %s: connected (%s, %d tools) %s", s.Alias, s.Transport(), len(names), strings.Join(names, ", ")))
	}
	return lines
}

// hooksInfo is the hooks table of `tiny-go config`.
func (a *runner) hooksInfo() []string {
	cfg, _ := hookwire.Load(a.IO.Getenv, a.IO.Settings, a.Cwd)
	var b bytes.Buffer
	if err := hookwire.Print(&b, cfg); err != nil {
		return []string{"hooks: " + err.Error()}
	}
	return strings.Split(strings.TrimSpace(b.String()), "\n")
}

// permissionsInfo is the mode, the settings' rules and the session's
// "always" answers.
func (a *runner) permissionsInfo() []string {
	mode := a.Mode.Mode()
	lines := []string{"Approval mode: " + string(mode) + ": " + modeDescription(mode) + " (Shift+Tab cycles)"}
	if set := a.Guard.Rules(); set != nil {
		var own, theirs []string
		for _, r := range set.Rules {
			line := fmt.Sprintf("  %-5s %s  (%s)", r.Kind, r.Text, r.Source)
			if r.Source == guard.KeyRuleSource {
				own = append(own, line)
			} else {
				theirs = append(theirs, line)
			}
		}
		if len(theirs) == 0 {
			lines = append(lines, "Permission rules: none (permissions.allow, ask and deny of .claude/settings.json)")
		} else {
			lines = append(append(lines, "Permission rules:"), theirs...)
		}
		if len(own) > 0 {
			lines = append(append(lines, "tiny-go's own rules:"), own...)
		}
		for _, p := range set.Problems {
			lines = append(lines, "  not used: "+p)
		}
	}
	allowed := a.Gate.Allowed()
	if len(allowed) == 0 {
		return append(lines, "Allowed for this session: nothing yet (answer a at a question to allow its kind)")
	}
	lines = append(lines, "Allowed for this session (your \"a\" answers):")
	for _, s := range allowed {
		lines = append(lines, "  "+s)
	}
	return lines
}

func modeDescription(m approval.Mode) string {
	for _, i := range approval.Modes {
		if i.Mode == m {
			return i.Description
		}
	}
	return ""
}

// Diagnostics is /diagnostics: what the diagnostics tool would tell the
// model, for the user.
func (h Host) Diagnostics(ctx context.Context, path string) []string {
	if h.a.LSP == nil {
		return []string{"Language servers are off (TINY_LSP=off, or neither write nor edit is offered)."}
	}
	return strings.Split(h.a.LSP.Manager.Report(ctx, path), "\n")
}
