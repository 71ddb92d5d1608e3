package headless

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tiny-agent/tiny-go/internal/mcp"
)

// sdkTransport reaches one of the SDK's in-process MCP servers
// (create_sdk_mcp_server, createSdkMcpServer): every JSON-RPC message
// goes to the SDK in an mcp_message control request, and the answer's
// mcp_response is the server's reply.
type sdkTransport struct {
	d    *Driver
	name string
}

// Connect opens a logical connection; the SDK keeps the server's state.
func (t *sdkTransport) Connect(context.Context) (sdk.Connection, error) {
	ctx, cancel := context.WithCancel(context.Background())
	return &sdkConn{t: t, in: make(chan jsonrpc.Message, 16), ctx: ctx, cancel: cancel}, nil
}

type sdkConn struct {
	t      *sdkTransport
	in     chan jsonrpc.Message
	ctx    context.Context // ends with Close
	cancel context.CancelFunc
	once   sync.Once
}

var errSDKConnClosed = errors.New("the SDK MCP connection is closed")

func (c *sdkConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.in:
		return m, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.ctx.Done():
		return nil, errSDKConnClosed
	}
}

// Write sends msg and returns at once; the reply to a request comes
// through Read when the SDK answers.
func (c *sdkConn) Write(_ context.Context, msg jsonrpc.Message) error {
	raw, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	if c.ctx.Err() != nil {
		return errSDKConnClosed
	}
	req, _ := msg.(*jsonrpc.Request)
	go c.exchange(raw, req)
	return nil
}

// exchange asks the SDK; a request the SDK fails gets an error reply, so
// the call that made it ends.
func (c *sdkConn) exchange(raw []byte, req *jsonrpc.Request) {
	r, err := c.t.d.request(c.ctx, map[string]any{"subtype": "mcp_message", "server_name": c.t.name, "message": json.RawMessage(raw)})
	if req == nil || !req.IsCall() {
		return // a notification or a reply of ours: the SDK only acknowledges it
	}
	var reply jsonrpc.Message
	switch {
	case err != nil:
		reply = &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}}
	case !r.OK:
		reply = &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the SDK failed the MCP request: " + r.Error}}
	default:
		reply = decodeSDKReply(r.Body, req.ID)
	}
	select {
	case c.in <- reply:
	case <-c.ctx.Done():
	}
}

// decodeSDKReply reads the mcp_response of an answer.
func decodeSDKReply(body json.RawMessage, id jsonrpc.ID) jsonrpc.Message {
	var resp struct {
		MCPResponse json.RawMessage `json:"mcp_response"`
	}
	if err := json.Unmarshal(body, &resp); err == nil && len(resp.MCPResponse) > 0 {
		if m, err := jsonrpc.DecodeMessage(resp.MCPResponse); err == nil {
			return m
		}
	}
	return &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("the SDK's answer holds no MCP response: %.200s", body)}}
}

func (c *sdkConn) Close() error {
	c.once.Do(c.cancel)
	return nil
}

func (c *sdkConn) SessionID() string { return "" }

// connectSDKServers connects the SDK's in-process MCP servers named by
// --mcp-config (type "sdk") and initialize (sdkMcpServers) and offers
// their tools from the next turn on. It runs in the main loop: the
// handshake's answers come through the input reader.
func (d *Driver) connectSDKServers(ctx context.Context, names []string) error {
	for _, name := range names {
		d.mu.Lock()
		_, done := d.sdkServers[name]
		d.mu.Unlock()
		if done {
			continue
		}
		s := mcp.Server{Alias: name, Conn: &sdkTransport{d: d, name: name}, CallTimeout: mcp.DefaultCallTimeout}
		c, err := mcp.Connect(ctx, s, mcp.Options{ClientName: "tiny-go", ClientVersion: d.opt.Version})
		if err != nil {
			return fmt.Errorf("the SDK MCP server %q: %w", name, err)
		}
		d.mu.Lock()
		d.sdkServers[name] = c
		d.mu.Unlock()
		if err := d.s.AddTools(name, c.Tools()); err != nil {
			return fmt.Errorf("the SDK MCP server %q: %w", name, err)
		}
	}
	return nil
}

// closeSDKServers ends the SDK servers' sessions.
func (d *Driver) closeSDKServers() {
	d.mu.Lock()
	cs := d.sdkServers
	d.sdkServers = map[string]*mcp.Client{}
	d.mu.Unlock()
	for _, c := range cs {
		_ = c.Close()
	}
}
