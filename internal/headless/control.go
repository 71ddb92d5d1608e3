package headless

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// control answers one control request of the SDK. Changes of the session
// (the model, the system prompt) are queued, so they apply between runs
// in the order the SDK sent them.
func (d *Driver) control(ctx context.Context, r *ControlRequest, queue chan<- work) {
	var resp any
	var err error
	switch r.Subtype {
	case "initialize":
		resp, err = d.initialize(r.Body, queue)
	case "interrupt":
		d.abortRun(ctx)
		resp = map[string]any{}
	case "set_permission_mode":
		resp, err = d.setMode(r.Body)
	case "set_model":
		err = d.setModel(r.Body, queue)
	case "mcp_status":
		resp = d.mcpStatus()
	case "get_context_usage":
		resp = d.contextUsage()
	default:
		err = fmt.Errorf("tiny-go does not support the control request %q", r.Subtype)
	}
	body := responseBody{Subtype: "success", RequestID: r.ID, Response: resp}
	if err != nil {
		body = responseBody{Subtype: "error", RequestID: r.ID, Error: err.Error()}
	}
	if body.Response == nil && body.Subtype == "success" {
		body.Response = map[string]any{}
	}
	d.out.json(outResponse{Type: controlResponse, Response: body})
}

// initialize takes what tiny-go can of the SDK's session options and
// says so: the system prompt is applied; MCP servers and hook callbacks
// are not (tiny-go's own catalog and hooks are), and the reply says that
// as Claude Code does (mcp_servers_applied false).
func (d *Driver) initialize(body json.RawMessage, queue chan<- work) (any, error) {
	var req struct {
		SystemPrompt       []string                 `json:"systemPrompt"`
		AppendSystemPrompt string                   `json:"appendSystemPrompt"`
		MCPServers         map[string]any           `json:"mcpServers"`
		Hooks              map[string][]hookMatcher `json:"hooks"`
		Agents             json.RawMessage          `json:"agents"`
		SDKMCPServers      []string                 `json:"sdkMcpServers"`
		JSONSchema         json.RawMessage          `json:"jsonSchema"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if js := strings.TrimSpace(string(req.JSONSchema)); js != "" && js != "null" {
		return nil, errors.New("tiny-go does not support structured output (outputFormat / output_format); run without it")
	}
	if err := d.addSDKHooks(req.Hooks); err != nil {
		return nil, err
	}
	if names := append(slices.Clone(d.opt.SDKServers), req.SDKMCPServers...); len(names) > 0 {
		queue <- work{apply: func() error { return d.connectSDKServers(context.Background(), names) }}
	}
	replace := strings.TrimSpace(strings.Join(req.SystemPrompt, "\n\n"))
	if replace != "" || strings.TrimSpace(req.AppendSystemPrompt) != "" {
		queue <- work{apply: func() error { return d.s.SetSystemPrompt(replace, req.AppendSystemPrompt) }}
	}
	resp := map[string]any{
		"commands": []any{map[string]any{"name": "compact", "description": "Summarize the conversation so far", "argumentHint": ""}},
		"agents":   []any{}, "output_style": "default", "available_output_styles": []string{"default"},
		"models":  []any{map[string]any{"value": d.s.Model(), "displayName": d.s.Model(), "description": "the model tiny-go runs"}},
		"account": map[string]any{}, "claude_code_version": d.opt.Version + " (tiny-go)",
	}
	if req.MCPServers != nil {
		resp["mcp_servers_applied"] = false
		if len(req.MCPServers) > 0 {
			fmt.Fprintln(d.opt.Log, "tiny-go: the SDK's mcpServers are not connected: tiny-go takes MCP servers from $TINY_MCP_CONFIG (--mcp alias)")
		}
	}
	return resp, nil
}

func (d *Driver) setMode(body json.RawMessage) (any, error) {
	var req struct {
		Mode string `json:"mode"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("set_permission_mode: %w", err)
	}
	m, err := ParseMode(req.Mode)
	if err != nil {
		return nil, err
	}
	// As Claude Code's: escalating to bypass needs the launch to allow
	// it, so an SDK cannot lift the permissions it was started under.
	if m == ModeBypass && d.opt.Mode != ModeBypass && !d.opt.AllowBypass {
		return nil, errors.New("cannot switch to bypassPermissions: tiny-go was not launched with --permission-mode bypassPermissions, --dangerously-skip-permissions or --allow-dangerously-skip-permissions")
	}
	d.mu.Lock()
	d.mode = m
	d.mu.Unlock()
	return map[string]any{"mode": string(m)}, nil
}

// SetAPIKeySource names where the model's key came from, for init's
// apiKeySource: Claude Code says "ANTHROPIC_API_KEY" for that variable;
// another provider's key is "none" (the SDK's type has no value for it).
func (d *Driver) SetAPIKeySource(source string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.keySource = source
}

// Mode is the permission mode now (set_permission_mode changes it), by
// Claude Code's name: what hooks see as permission_mode.
func (d *Driver) Mode() Mode {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.mode
}

// setModel queues the change: a running turn keeps its model, the next
// one uses the new one. "default" (or null) is the model tiny-go started
// with.
func (d *Driver) setModel(body json.RawMessage, queue chan<- work) error {
	var req struct {
		Model *string `json:"model"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return fmt.Errorf("set_model: %w", err)
	}
	model := ""
	if req.Model != nil && *req.Model != "default" {
		model = strings.TrimSpace(*req.Model)
	}
	queue <- work{apply: func() error { return d.s.SetModel(model) }}
	return nil
}
