package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tiny-agent/tiny-go/internal/tools"
)

// PreferredProtocol is the MCP version asked for first. The SDK falls back
// to an older one only when the server cannot speak it; Client.Protocol
// reports what was negotiated.
const PreferredProtocol = "2026-07-28"

// DefaultConnectTimeout bounds the handshake and tools/list together.
const DefaultConnectTimeout = 10 * time.Second

// maxToolListPages stops a server that hands out fresh cursors forever.
const maxToolListPages = 2 * MaxToolsPerServer

// errClosed is what a call on a closed client reports.
var errClosed = errors.New("the MCP client is closed")

// Options configure Connect. The zero value is ready to use.
type Options struct {
	// ClientName and ClientVersion identify tiny-go to the server.
	ClientName    string // default "tiny-go"
	ClientVersion string // default "dev"
	// ConnectTimeout bounds connecting and listing; default 10 s.
	ConnectTimeout time.Duration
	// Transport carries the HTTP requests; nil means a clone of
	// http.DefaultTransport. Tests use it to trust a TLS test server.
	Transport http.RoundTripper
}

func (o Options) connectTimeout() time.Duration {
	if o.ConnectTimeout > 0 {
		return o.ConnectTimeout
	}
	return DefaultConnectTimeout
}

// Client is a connected MCP server and the tools it offers.
type Client struct {
	server Server
	opts   Options
	http   *http.Client
	tools  []*Tool

	mu       sync.Mutex
	session  *sdk.ClientSession
	dead     <-chan struct{} // closed when session's connection has ended
	broken   bool            // a call saw the session fail
	protocol string
	closed   bool
}

// Connect opens a session with s, lists its tools and builds the adapters
// of the allowlisted ones. A failure is a *ConnectError naming the alias.
func Connect(ctx context.Context, s Server, opts Options) (*Client, error) {
	invalid := func(msg string) error {
		return &ConnectError{Alias: s.Alias, Type: ErrorConnectionFailed, Cause: clean(msg, s.bearer())}
	}
	httpClient, err := newHTTPClient(s, opts.Transport)
	if err != nil {
		return nil, invalid(err.Error())
	}
	c := &Client{server: s, opts: opts, http: httpClient}

	ctx, cancel := context.WithTimeout(ctx, opts.connectTimeout())
	defer cancel()
	ctx, obs, stop := observe(ctx)
	defer stop()

	session, err := c.dial(ctx)
	if err != nil {
		return nil, c.connectError(err, obs)
	}
	c.adopt(session)

	listed, err := listTools(ctx, session)
	if err != nil {
		c.Close()
		var bad *listError
		if errors.As(err, &bad) {
			return nil, invalid(bad.msg)
		}
		return nil, c.connectError(err, obs)
	}
	c.tools, err = c.offered(listed)
	if err != nil {
		c.Close()
		return nil, invalid(err.Error())
	}
	return c, nil
}

func (c *Client) connectError(err error, obs *observation) *ConnectError {
	kind := ErrorConnectionFailed
	if errors.Is(err, context.DeadlineExceeded) {
		kind = ErrorTimeout
	}
	return &ConnectError{Alias: c.server.Alias, Type: kind, Cause: describe(err, obs, c.opts.connectTimeout(), c.server.bearer())}
}

// dial runs the SDK handshake but returns as soon as ctx is done: on a
// failed handshake the SDK closes its half-open session, which waits up to
// 5 s for a cancellation notice to an unresponsive server. That wait
// finishes in the background, and a session that arrives late is closed.
func (c *Client) dial(ctx context.Context) (*sdk.ClientSession, error) {
	name, version := c.opts.ClientName, c.opts.ClientVersion
	if name == "" {
		name = "tiny-go"
	}
	if version == "" {
		version = "dev"
	}
	client := sdk.NewClient(&sdk.Implementation{Name: name, Version: version}, &sdk.ClientOptions{
		// No roots, sampling or elicitation: tiny-go only calls tools.
		Capabilities: &sdk.ClientCapabilities{},
	})
	transport := &sdk.StreamableClientTransport{
		Endpoint:   c.server.Endpoint,
		HTTPClient: c.http,
		// Server-initiated messages are not used; a standing GET stream
		// would only be one more long-lived body.
		DisableStandaloneSSE: true,
	}
	type result struct {
		session *sdk.ClientSession
		err     error
	}
	done := make(chan result, 1)
	go func() {
		s, err := client.Connect(ctx, transport, &sdk.ClientSessionOptions{ProtocolVersion: PreferredProtocol})
		done <- result{s, err}
	}()
	select {
	case r := <-done:
		return r.session, r.err
	case <-ctx.Done():
		go func() {
			if r := <-done; r.session != nil {
				r.session.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// adopt makes session the current one.
func (c *Client) adopt(session *sdk.ClientSession) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.session, c.dead = session, watch(session)
	c.protocol = session.InitializeResult().ProtocolVersion
}

// current returns a live session. A connection that failed (for instance
// after refusing an oversized JSON response, or when a server forgot its
// session) is replaced by a new handshake; the tool list is not fetched
// again. The call that broke it is never retried.
func (c *Client) current(ctx context.Context) (*sdk.ClientSession, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errClosed
	}
	if !c.broken {
		select {
		case <-c.dead:
		default:
			return c.session, nil
		}
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.connectTimeout())
	defer cancel()
	ctx, obs, stop := observe(ctx)
	defer stop()
	session, err := c.dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("reconnecting: %s", describe(err, obs, c.opts.connectTimeout(), c.server.bearer()))
	}
	go c.session.Close() // broken; only its bookkeeping is left
	c.session, c.dead, c.broken = session, watch(session), false
	c.protocol = session.InitializeResult().ProtocolVersion
	return session, nil
}

// markBroken makes the next call reconnect, unless session was replaced
// already. Waiting for the SDK to notice would race with that next call.
func (c *Client) markBroken(session *sdk.ClientSession) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.session == session {
		c.broken = true
	}
}

// watch returns a channel closed once session's connection has ended
// (also after Close).
func watch(session *sdk.ClientSession) <-chan struct{} {
	dead := make(chan struct{})
	go func() {
		session.Wait()
		close(dead)
	}()
	return dead
}

// listError is a tools/list answer that breaks the rules of mcp.md.
type listError struct{ msg string }

func (e *listError) Error() string { return e.msg }

// listTools pages through tools/list, enforcing the server-wide rules: no
// repeated cursor, at most MaxToolsPerServer tools, names nonempty and
// unique.
func listTools(ctx context.Context, session *sdk.ClientSession) ([]*sdk.Tool, error) {
	var all []*sdk.Tool
	names := make(map[string]bool)
	cursors := make(map[string]bool)
	cursor := ""
	for page := 0; ; page++ {
		if page == maxToolListPages {
			return nil, &listError{fmt.Sprintf("tools/list did not end after %d pages", maxToolListPages)}
		}
		res, err := session.ListTools(ctx, &sdk.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, err
		}
		for _, t := range res.Tools {
			switch {
			case t.Name == "":
				return nil, &listError{"tools/list has a tool without a name"}
			case names[t.Name]:
				return nil, &listError{fmt.Sprintf("tools/list has the tool %q twice", t.Name)}
			}
			names[t.Name] = true
			all = append(all, t)
		}
		if len(all) > MaxToolsPerServer {
			return nil, &listError{fmt.Sprintf("tools/list has more than %d tools", MaxToolsPerServer)}
		}
		if res.NextCursor == "" {
			return all, nil
		}
		if cursors[res.NextCursor] {
			return nil, &listError{"tools/list repeated a cursor"}
		}
		cursors[res.NextCursor] = true
		cursor = res.NextCursor
	}
}

// offered builds the adapters of the allowlisted tools, in allowlist order.
// Description and schema limits are checked for these only: a tool that is
// never offered cannot harm the conversation.
func (c *Client) offered(listed []*sdk.Tool) ([]*Tool, error) {
	byName := make(map[string]*sdk.Tool, len(listed))
	for _, t := range listed {
		byName[t.Name] = t
	}
	out := make([]*Tool, 0, len(c.server.AllowedTools))
	for _, name := range c.server.AllowedTools {
		t, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("MCP allowlisted tool is missing: %s", name)
		}
		if len(t.Description) > MaxDescriptionBytes {
			return nil, fmt.Errorf("tool %q: description is %d bytes (at most %d)", name, len(t.Description), MaxDescriptionBytes)
		}
		params, err := validateInputSchema(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("tool %q: %w", name, err)
		}
		tool, err := newTool(c, t.Name, t.Description, params)
		if err != nil {
			return nil, err
		}
		out = append(out, tool)
	}
	return out, nil
}

// Alias is the server's catalog alias.
func (c *Client) Alias() string { return c.server.Alias }

// Protocol is the negotiated MCP protocol version.
func (c *Client) Protocol() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.protocol
}

// Tools are the offered (allowlisted) tools, in allowlist order.
func (c *Client) Tools() []tools.Tool {
	out := make([]tools.Tool, len(c.tools))
	for i, t := range c.tools {
		out[i] = t
	}
	return out
}

// StartupLine is the line printed once the server is ready.
func (c *Client) StartupLine() string {
	return fmt.Sprintf("MCP %s: connected (%s, %d tools)", c.server.Alias, c.Protocol(), len(c.tools))
}

// Close ends the session. It is idempotent; later calls fail at once.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	session := c.session
	c.mu.Unlock()
	if session == nil {
		return nil
	}
	if err := session.Close(); err != nil {
		return fmt.Errorf("MCP %s: close: %s", c.server.Alias, clean(err.Error(), c.server.bearer()))
	}
	return nil
}
