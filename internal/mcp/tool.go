package mcp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tiny-agent/tiny-go/internal/tools"
)

// Tool is one allowlisted MCP tool as a tools.Tool.
type Tool struct {
	client *Client
	name   string // the server's tool name
	def    tools.Definition
}

var _ tools.Tool = (*Tool)(nil)

// identity is what DefinitionIdentity binds: a change of endpoint, of how
// the token is sent or of the tool makes a pending call configuration_changed.
type identity struct {
	Kind       string `json:"kind"`
	Endpoint   string `json:"endpoint"`
	AuthHeader string `json:"authHeader"`
	Tool       string `json:"tool"`
}

func newTool(c *Client, name, description string, params jsontext.Value) (*Tool, error) {
	modelName, err := ToolName(c.server.Alias, name)
	if err != nil {
		return nil, err
	}
	endpoint := c.server.Endpoint
	switch {
	case c.server.Conn != nil:
		endpoint = "sdk:" + c.server.Alias
	case c.server.Command != "":
		endpoint = "stdio:" + c.server.Target()
	}
	id, err := json.Marshal(identity{Kind: "mcp", Endpoint: endpoint, AuthHeader: c.server.AuthHeader(), Tool: name})
	if err != nil {
		return nil, err
	}
	return &Tool{
		client: c,
		name:   name,
		def: tools.Definition{
			Name:               modelName,
			Description:        description,
			Parameters:         params,
			DefinitionIdentity: string(id),
			Display:            Display(c.server.Alias, name),
		},
	}, nil
}

// Name is the tool's name on its server.
func (t *Tool) Name() string { return t.name }

// Definition implements tools.Tool.
func (t *Tool) Definition() tools.Definition {
	d := t.def
	d.Parameters = append(jsontext.Value(nil), t.def.Parameters...)
	return d
}

// Replay implements tools.Tool: an MCP call is never run again on resume.
func (t *Tool) Replay() tools.Replay {
	return tools.Replay{Policy: tools.ReplayNever, Key: "mcp:" + t.client.server.Alias + ":" + t.name}
}

// Run implements tools.Tool. The call is bounded by the server's call
// timeout; cancelling ctx makes the SDK send notifications/cancelled and
// drop the HTTP request, so the server sees the cancellation too.
func (t *Tool) Run(ctx context.Context, args jsontext.Value) tools.Result {
	s := t.client.server
	timeoutCtx, cancel := t.client.timers.start(ctx, s.CallTimeout)
	defer cancel()
	callCtx, obs, stop := observe(timeoutCtx)
	defer stop()

	if len(args) == 0 {
		args = jsontext.Value("{}")
	}
	session, err := t.client.current(callCtx)
	if err != nil {
		if ctx.Err() != nil {
			return cancelledResult()
		}
		// Already in plain words: closed, gone, or why reconnecting failed.
		return tools.Result{Content: t.failurePrefix() + err.Error(), IsError: true}
	}
	res, err := session.CallTool(callCtx, &sdk.CallToolParams{Name: t.name, Arguments: rawJSON(args)})
	if err != nil {
		if obs.snapshot().tooLarge || errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, sdk.ErrSessionMissing) {
			t.client.markBroken(session)
		}
		return t.failed(ctx, timeoutCtx, err, obs)
	}
	if ctx.Err() != nil {
		return cancelledResult()
	}
	if res.IsError {
		return tools.Result{Content: toolErrorPrefix + formatResult(res), IsError: true}
	}
	return tools.Result{Content: formatResult(res)}
}

// cancelledResult is what an aborted call returns; the agent replaces it
// with its synthetic interrupted result anyway.
func cancelledResult() tools.Result {
	return tools.Result{Content: "MCP tool call cancelled", IsError: true}
}

// failurePrefix names the server and the call: "MCP <alias>: calling <tool>: ".
func (t *Tool) failurePrefix() string {
	return "MCP " + t.client.server.Alias + ": calling " + t.name + ": "
}

func (t *Tool) failed(ctx, timeoutCtx context.Context, err error, obs *observation) tools.Result {
	s := t.client.server
	proc := t.client.proc
	switch {
	case ctx.Err() != nil:
		return cancelledResult()
	case !obs.snapshot().tooLarge && timedOut(timeoutCtx):
		return tools.Result{Content: fmt.Sprintf("%sno reply within %s", t.failurePrefix(), s.CallTimeout), IsError: true}
	case proc != nil && connectionEnded(err):
		// The connection ends a moment before the exit is collected.
		proc.waitExit(time.Second)
	}
	t.client.mu.Lock()
	hs := t.client.hs
	t.client.mu.Unlock()
	cause := describe(err, failure{obs: obs, hs: hs, proc: proc, step: "tools/call", timeout: s.CallTimeout, token: s.bearer()})
	return tools.Result{Content: t.failurePrefix() + cause, IsError: true}
}

// rawJSON hands already-encoded arguments to the SDK's encoder unchanged.
type rawJSON []byte

func (r rawJSON) MarshalJSON() ([]byte, error) { return r, nil }
