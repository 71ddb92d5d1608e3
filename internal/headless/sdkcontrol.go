package headless

import (
	"slices"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/agent"
	"github.com/tiny-agent/tiny-go/internal/mcp"
)

// mcpStatus answers mcp_status: every MCP server of the session, all
// connected (tiny-go connects its servers before the first turn, and a
// server that fails to connect fails the start); the SDK's in-process
// servers with their tools.
func (d *Driver) mcpStatus() any {
	d.mu.Lock()
	sdkServers := make(map[string]*mcp.Client, len(d.sdkServers))
	for n, c := range d.sdkServers {
		sdkServers[n] = c
	}
	d.mu.Unlock()
	out := []map[string]any{}
	for _, name := range d.s.MCPServers() {
		st := map[string]any{"name": name, "status": "connected", "source": "tiny-go"}
		if c := sdkServers[name]; c != nil {
			st["source"] = "sdk"
			var tools []map[string]any
			for _, t := range c.Tools() {
				name := t.Definition().Name
				if mt, ok := t.(*mcp.Tool); ok {
					name = mt.Name()
				}
				tools = append(tools, map[string]any{"name": name, "description": t.Definition().Description})
			}
			st["tools"] = tools
		}
		out = append(out, st)
	}
	slices.SortStableFunc(out, func(a, b map[string]any) int {
		return strings.Compare(a["name"].(string), b["name"].(string))
	})
	return map[string]any{"mcpServers": out}
}

// contextUsage answers get_context_usage with what tiny-go knows: the
// prompt and reply tokens of the latest model reply against the model's
// context window. tiny-go counts no tokens itself, so the used part is
// one "messages" row (system prompt and tools included) and the rest is
// free space.
func (d *Driver) contextUsage() any {
	cfg := d.s.Agent().Config()
	window := int64(agent.DefaultContextWindow)
	if ac := cfg.AutoCompact; ac != nil && ac.ContextWindow > 0 {
		window = ac.ContextWindow
	}
	u := d.s.State().LastAssistantUsage
	used := u.Input + u.Output
	free := max(0, window-used)
	pct := float64(used) * 100 / float64(window)
	return map[string]any{
		"categories": []map[string]any{
			{"id": "messages", "name": "Messages", "tokens": used, "color": "purple", "kind": "used"},
			{"id": "free_space", "name": "Free space", "tokens": free, "color": "gray", "kind": "free"},
		},
		"totalTokens": used, "maxTokens": window, "rawMaxTokens": window, "percentage": pct,
		"gridRows": [][]any{}, "model": d.s.Model(), "memoryFiles": []any{}, "mcpTools": []any{}, "agents": []any{},
	}
}
