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

// contextWindow is the model's context window as tiny-go's automatic
// compaction knows it (the default when it is looked up at run time).
func (d *Driver) contextWindow() int64 {
	if ac := d.s.Agent().Config().AutoCompact; ac != nil && ac.ContextWindow > 0 {
		return ac.ContextWindow
	}
	return agent.DefaultContextWindow
}

// modelUsage is a turn's entry of the result's modelUsage (one model
// runs a turn; set_model applies between turns). tiny-go sets no output
// limit of its own: maxOutputTokens is 0.
func (d *Driver) modelUsage(t *turn) map[string]any {
	return map[string]any{
		"inputTokens": t.total.Input, "outputTokens": t.total.Output,
		"cacheReadInputTokens": t.total.CacheRead, "cacheCreationInputTokens": t.total.CacheWrite,
		"webSearchRequests": 0, "costUSD": t.cost, "contextWindow": d.contextWindow(), "maxOutputTokens": 0,
	}
}

// contextUsage answers get_context_usage with what tiny-go knows: the
// prompt and reply tokens of the latest model reply against the model's
// context window. tiny-go counts no tokens itself, so the used part is
// one "messages" row (system prompt and tools included) and the rest is
// free space.
func (d *Driver) contextUsage() any {
	window := d.contextWindow()
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
