package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tiny-agent/tiny-go/internal/oauth"
	"github.com/tiny-agent/tiny-go/internal/procs"
	"github.com/tiny-agent/tiny-go/internal/sandbox"
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

	// WorkDir is where a stdio server starts and where its log and process
	// record live (.tiny-agent/mcp); default: the process's directory.
	WorkDir string
	// LookupEnv reads tiny-go's environment, from which a stdio server
	// gets PATH, HOME, LANG, TMPDIR and its passEnv variables; default
	// os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// Secrets are values that must never reach a stdio server: the model's
	// API key, MCP tokens. A passEnv variable holding one is refused.
	Secrets []string
	// Sandbox confines a stdio server like the commands the model runs
	// (tools.md); nil starts it unconfined.
	Sandbox *sandbox.Sandbox
	// Procs records a stdio server's process group, so that the next
	// tiny-go in the directory kills what is left if this one is killed;
	// nil records nothing.
	Procs *procs.Tracker
	// Notice receives one line when a server goes away mid-session, once
	// per server. nil drops it.
	Notice func(string)
	// Elicit puts a server's form to the user; nil declines every form
	// and says so through Notice (one-shot runs without a terminal).
	Elicit ElicitFunc
	// OAuth signs in to remote servers that ask for it (HTTP 401); nil
	// leaves a 401 to fail the server with its status.
	OAuth *OAuthOptions
}

// OAuthOptions say where tokens are kept and how a sign-in may run.
type OAuthOptions struct {
	Store *oauth.Store
	// Interactive lets a 401 start the browser flow (`tiny-go mcp login`);
	// otherwise it fails with a hint naming that command.
	Interactive bool
	Browser     oauth.Browser
}

func (o Options) connectTimeout() time.Duration {
	if o.ConnectTimeout > 0 {
		return o.ConnectTimeout
	}
	return DefaultConnectTimeout
}

// Client is a connected MCP server and the tools it offers.
type Client struct {
	server  Server
	opts    Options
	http    *http.Client            // remote servers
	proc    *stdioProcess           // stdio servers
	version *atomic.Pointer[string] // see handshake.version
	oauth   auth.OAuthHandler       // remote servers that may sign in
	timers  callTimers              // of the calls in flight
	tools   []*Tool

	mu       sync.Mutex
	session  *sdk.ClientSession
	hs       *handshake      // the watcher of session's connection
	dead     <-chan struct{} // closed when session's connection has ended
	broken   bool            // a call saw the session fail
	protocol string
	closed   bool
}

// Connect opens a session with s (starting its program first for a stdio
// server), lists its tools and builds the adapters of the allowlisted ones.
// A failure is a *ConnectError naming the alias, the step and the cause;
// nothing is left running after one.
func Connect(ctx context.Context, s Server, opts Options) (*Client, error) {
	c := &Client{server: s, opts: opts, version: new(atomic.Pointer[string])}
	invalid := func(doing, msg string) error {
		return &ConnectError{Alias: s.Alias, Type: ErrorConnectionFailed, Doing: doing, Cause: clean(msg, s.bearer())}
	}
	switch {
	case s.Conn != nil:
	case s.Command != "":
		proc, err := startStdio(s, opts)
		if err != nil {
			return nil, invalid("starting "+s.Command, err.Error())
		}
		c.proc = proc
	default:
		httpClient, err := newHTTPClient(s, opts.Transport, c.version)
		if err != nil {
			return nil, invalid(doingConnecting, err.Error())
		}
		c.http = httpClient
		if c.oauth, err = newOAuthHandler(s, opts); err != nil {
			return nil, invalid("signing in", err.Error())
		}
	}

	ctx, cancel := context.WithTimeout(ctx, opts.connectTimeout())
	defer cancel()
	ctx, obs, stop := observe(ctx)
	defer stop()

	hs := c.newHandshake()
	session, err := c.dial(ctx, hs)
	if err != nil {
		ce := c.connectError(doingConnecting, err, hs.lastMethod(), hs, obs)
		c.Close()
		return nil, ce
	}
	c.adopt(session, hs)

	listed, err := listTools(ctx, session)
	if noTools(session, err) {
		listed, err = nil, nil
	}
	if err != nil {
		var ce error
		var bad *listError
		if errors.As(err, &bad) {
			ce = invalid(doingListing, bad.msg)
		} else {
			ce = c.connectError(doingListing, err, methodListTools, hs, obs)
		}
		c.Close()
		return nil, ce
	}
	c.tools, err = c.offered(listed)
	if err != nil {
		c.Close()
		return nil, invalid(doingListing, err.Error())
	}
	if c.proc != nil {
		go c.watchStdio(session)
	}
	return c, nil
}

// connectionEnded reports whether err says the connection itself ended (a
// stdio server that exited, say), rather than a request failing on it.
func connectionEnded(err error) bool {
	return errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

func (c *Client) newHandshake() *handshake {
	return &handshake{version: c.version, stream: c.proc != nil}
}

// connectError describes a failed handshake or listing. A refused fallback
// is described by server/discover's own failure, the real cause.
func (c *Client) connectError(doing string, err error, step string, hs *handshake, obs *observation) *ConnectError {
	if refused := hs.refusal(); refused != nil {
		err, step = refused, methodDiscover
	}
	kind := ErrorConnectionFailed
	if errors.Is(err, context.DeadlineExceeded) {
		kind = ErrorTimeout
	}
	if c.proc != nil && connectionEnded(err) {
		// The connection ends a moment before the exit is collected.
		c.proc.waitExit(time.Second)
	}
	f := failure{obs: obs, hs: hs, proc: c.proc, step: step, timeout: c.opts.connectTimeout(), token: c.server.bearer()}
	return &ConnectError{Alias: c.server.Alias, Type: kind, Doing: doing, Cause: describe(err, f)}
}

// dial runs the SDK handshake but returns as soon as ctx is done: on a
// failed handshake the SDK closes its half-open session, which waits up to
// 5 s for a cancellation notice to an unresponsive server. That wait
// finishes in the background, and a session that arrives late is closed.
func (c *Client) dial(ctx context.Context, hs *handshake) (*sdk.ClientSession, error) {
	name, version := c.opts.ClientName, c.opts.ClientVersion
	if name == "" {
		name = "tiny-go"
	}
	if version == "" {
		version = "dev"
	}
	client := sdk.NewClient(&sdk.Implementation{Name: name, Version: version}, &sdk.ClientOptions{
		// No roots or sampling: tiny-go calls tools, and answers the
		// forms a server asks the user to fill in while one runs.
		Capabilities: &sdk.ClientCapabilities{
			Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.FormElicitationCapabilities{}},
		},
		ElicitationHandler: elicitHandler(c.server.Alias, c.opts.Elicit, c.opts.Notice, &c.timers),
	})
	var transport sdk.Transport
	switch {
	case c.server.Conn != nil:
		transport = c.server.Conn
	case c.proc != nil:
		transport = &sdk.IOTransport{Reader: c.proc.stdout, Writer: c.proc.stdin}
	case c.server.SSE:
		transport = detached{&sdk.SSEClientTransport{Endpoint: c.server.Endpoint, HTTPClient: c.http}}
	default:
		transport = &sdk.StreamableClientTransport{
			Endpoint:     c.server.Endpoint,
			HTTPClient:   c.http,
			OAuthHandler: c.oauth,
			// The standalone GET stream carries requests the server starts
			// outside a call (elicitation); servers without one say 405.
		}
	}
	if c.proc != nil {
		transport = &handshakeTransport{inner: transport, hs: hs}
	} else {
		ctx = withHandshake(ctx, hs)
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

// detached connects its transport with a context that is never
// cancelled: the older SSE transport ties its event stream, which carries
// every reply, to that context, and the handshake's ends when it does.
// dial still gives up on time, and Close ends the stream.
type detached struct{ sdk.Transport }

func (d detached) Connect(ctx context.Context) (sdk.Connection, error) {
	return d.Transport.Connect(context.WithoutCancel(ctx))
}

// adopt makes session the current one.
func (c *Client) adopt(session *sdk.ClientSession, hs *handshake) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.session, c.hs, c.dead = session, hs, watch(session)
	c.protocol = session.InitializeResult().ProtocolVersion
}

// current returns a live session. A remote connection that failed (for
// instance after refusing an oversized JSON response, or when a server
// forgot its session) is replaced by a new handshake; the tool list is not
// fetched again. The call that broke it is never retried. A stdio server
// whose connection ended is gone for the rest of the run.
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
	if c.proc != nil {
		return nil, c.proc.gone()
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.connectTimeout())
	defer cancel()
	ctx, obs, stop := observe(ctx)
	defer stop()
	hs := c.newHandshake()
	session, err := c.dial(ctx, hs)
	if err != nil {
		step := hs.lastMethod()
		if refused := hs.refusal(); refused != nil {
			err, step = refused, methodDiscover
		}
		return nil, fmt.Errorf("reconnecting: %s", describe(err, failure{obs: obs, hs: hs, step: step, timeout: c.opts.connectTimeout(), token: c.server.bearer()}))
	}
	go c.session.Close() // broken; only its bookkeeping is left
	c.session, c.hs, c.dead, c.broken = session, hs, watch(session), false
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

// watchStdio waits for a stdio server to exit or its connection to end
// mid-session, stops what is left of it and reports it once. Close, which
// ends both on purpose, reports nothing.
func (c *Client) watchStdio(session *sdk.ClientSession) {
	c.mu.Lock()
	dead := c.dead
	c.mu.Unlock()
	select {
	case <-dead:
	case <-c.proc.done:
	}
	c.mu.Lock()
	closed := c.closed
	if !closed {
		c.broken = true
	}
	c.mu.Unlock()
	if closed {
		return
	}
	c.proc.waitExit(time.Second)
	c.proc.stop()
	session.Close()
	if c.opts.Notice != nil {
		c.opts.Notice(fmt.Sprintf("MCP %s: %s; its tools fail from now on", c.server.Alias, c.proc.endText()))
	}
}

// noTools reports a server without tools: it does not declare the tools
// capability, and says so when asked anyway (method not found).
func noTools(session *sdk.ClientSession, err error) bool {
	if err == nil {
		return false
	}
	res := session.InitializeResult()
	rpcErr := serverError(err)
	return res != nil && res.Capabilities != nil && res.Capabilities.Tools == nil &&
		rpcErr != nil && rpcErr.Code == jsonrpc.CodeMethodNotFound
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

// offered builds the adapters of the offered tools: the allowlisted ones
// in allowlist order (each must exist and be valid), or without an
// allowlist every listed tool in the server's order, where one that breaks
// the limits is left out with a notice rather than failing the server.
// disallowedTools are never offered. Limits are checked for offered tools
// only: a tool that is never offered cannot harm the conversation.
func (c *Client) offered(listed []*sdk.Tool) ([]*Tool, error) {
	byName := make(map[string]*sdk.Tool, len(listed))
	for _, t := range listed {
		byName[t.Name] = t
	}
	names := c.server.AllowedTools
	if names == nil {
		for _, t := range listed {
			names = append(names, t.Name)
		}
	}
	out := make([]*Tool, 0, len(names))
	for _, name := range names {
		if slices.Contains(c.server.DisallowedTools, name) {
			continue
		}
		t, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("MCP allowlisted tool is missing: %s", name)
		}
		tool, err := c.adapter(t)
		switch {
		case err != nil && c.server.AllowedTools != nil:
			return nil, err
		case err != nil:
			if c.opts.Notice != nil {
				c.opts.Notice(fmt.Sprintf("MCP %s: tool %s is not offered: %v", c.server.Alias, clean(name, ""), err))
			}
		default:
			out = append(out, tool)
		}
	}
	return out, nil
}

// adapter checks one listed tool and builds its adapter.
func (c *Client) adapter(t *sdk.Tool) (*Tool, error) {
	if len(t.Description) > MaxDescriptionBytes {
		return nil, fmt.Errorf("tool %q: description is %d bytes (at most %d)", t.Name, len(t.Description), MaxDescriptionBytes)
	}
	params, err := validateInputSchema(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("tool %q: %w", t.Name, err)
	}
	return newTool(c, t.Name, t.Description, params)
}

// Alias is the server's catalog alias.
func (c *Client) Alias() string { return c.server.Alias }

// Protocol is the negotiated MCP protocol version.
func (c *Client) Protocol() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.protocol
}

// Tools are the offered tools (see offered).
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
	var err error
	if session != nil {
		err = session.Close()
	}
	if c.proc != nil {
		// Closing the session closed the server's stdin, which asks it to
		// exit; stop waits a moment, then ends its whole process group.
		c.proc.stop()
		return nil
	}
	if err != nil {
		return fmt.Errorf("MCP %s: close: %s", c.server.Alias, clean(innermost(err).Error(), c.server.bearer()))
	}
	return nil
}

// Transport is TransportStdio, TransportHTTP or TransportSSE.
func (c *Client) Transport() string { return c.server.Transport() }
