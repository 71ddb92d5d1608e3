package mcp

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-json-experiment/json"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// JSON-RPC methods tiny-go names in its messages.
const (
	methodDiscover   = "server/discover"
	methodInitialize = "initialize"
	methodListTools  = "tools/list"
)

// codeUnsupportedProtocolVersion is the MCP error a server sends when it
// cannot speak the protocol version asked for.
const codeUnsupportedProtocolVersion = sdk.CodeUnsupportedProtocolVersion

// errFallbackRefused stops the SDK's initialize fallback. The SDK tries the
// older handshake after any failed server/discover; mcp.md allows it only
// when the server said it cannot speak the protocol.
var errFallbackRefused = errors.New("older protocol not tried: server/discover did not say the protocol is unsupported")

// handshake watches the messages of one connection: it enforces mcp.md's
// fallback rule, remembers why server/discover failed, learns the protocol
// an initialize negotiated, and notices a peer that sends something other
// than JSON-RPC. The SDK does all of this internally with no hook, so the
// connection is wrapped.
type handshake struct {
	// version receives the protocol an initialize negotiated, so the HTTP
	// transport can send it as Mcp-Protocol-Version (the SDK learns it
	// through a hook that a wrapped connection hides). May be nil.
	version *atomic.Pointer[string]
	// stream is set for stdio, where a failed read means the server wrote
	// something that is not JSON-RPC.
	stream bool

	mu          sync.Mutex
	discoverID  jsonrpc.ID
	discovering bool  // server/discover was sent
	answered    bool  // its reply (or failure) arrived
	mayFallBack bool  // the server said it cannot speak the protocol
	discoverErr error // why server/discover failed
	initID      jsonrpc.ID
	last        string // the last call sent, named in messages
	garbage     bool   // a read failed on something that is not JSON-RPC
}

func (h *handshake) lastMethod() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last
}

// refusal is why server/discover failed when that failure ended the
// handshake (no older protocol was allowed), or nil: it did not fail, an
// older protocol was allowed, or no reply came (the caller's own error,
// a timeout, says why).
func (h *handshake) refusal() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.discovering && !h.mayFallBack {
		return h.discoverErr
	}
	return nil
}

// sawGarbage reports whether the peer wrote something that is not JSON-RPC.
// A nil handshake saw nothing.
func (h *handshake) sawGarbage() bool {
	if h == nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.garbage
}

// sending records an outgoing call, and refuses an initialize that would
// be a fallback mcp.md does not allow.
func (h *handshake) sending(req *jsonrpc.Request) error {
	if !req.IsCall() {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	switch req.Method {
	case methodDiscover:
		h.discoverID, h.discovering = req.ID, true
	case methodInitialize:
		if h.discovering && !h.mayFallBack {
			return errFallbackRefused
		}
		h.initID = req.ID
	}
	h.last = req.Method
	return nil
}

// writeFailed records a failed server/discover (an HTTP error, say).
func (h *handshake) writeFailed(ctx context.Context, req *jsonrpc.Request, err error) {
	if req.Method != methodDiscover {
		return
	}
	status := 0
	if obs := observationFrom(ctx); obs != nil {
		status = obs.snapshot().status
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.discoverID != req.ID {
		return
	}
	h.answered = true
	h.discoverErr = err
	// Any HTTP 400 is a server that does not know server/discover: servers
	// built on the TypeScript SDK refuse it with an error whose id is null
	// ("Unsupported protocol version", or "Invalid or missing session ID"
	// when they keep sessions), which the SDK drops unread.
	h.mayFallBack = status == 400 || status == 0 && cannotSpeak(err)
}

// received looks at a reply: the one to server/discover decides whether an
// older protocol may be tried; the one to initialize names the protocol.
func (h *handshake) received(resp *jsonrpc.Response) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.discovering && resp.ID == h.discoverID:
		h.answered = true
		if resp.Error != nil {
			h.discoverErr = resp.Error
			h.mayFallBack = cannotSpeak(resp.Error)
		} else {
			// A discover result without a common version makes the SDK
			// fall back: the server said which versions it speaks.
			h.mayFallBack = true
		}
	case resp.ID == h.initID && resp.Error == nil && h.version != nil:
		var res struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if json.Unmarshal(resp.Result, &res) == nil && res.ProtocolVersion != "" {
			v := res.ProtocolVersion
			h.version.Store(&v)
		}
	}
}

func (h *handshake) readFailed(err error) {
	if !h.stream || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, os.ErrClosed) {
		return
	}
	h.mu.Lock()
	h.garbage = true
	h.mu.Unlock()
}

// cannotSpeak reports whether err is the server saying it does not speak
// the protocol asked for: method not found, or an unsupported-version
// error (the MCP code, or an older server's message saying so).
func cannotSpeak(err error) bool {
	rpcErr := serverError(err)
	if rpcErr == nil {
		return false
	}
	return rpcErr.Code == jsonrpc.CodeMethodNotFound ||
		rpcErr.Code == codeUnsupportedProtocolVersion ||
		strings.Contains(strings.ToLower(rpcErr.Message), "unsupported protocol version")
}

// handshakeTransport wraps every connection of inner in a watching one.
type handshakeTransport struct {
	inner sdk.Transport
	hs    *handshake
}

func (t *handshakeTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	conn, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &handshakeConn{Connection: conn, hs: t.hs}, nil
}

type handshakeConn struct {
	sdk.Connection
	hs *handshake
}

func (c *handshakeConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	req, _ := msg.(*jsonrpc.Request)
	if req != nil {
		if err := c.hs.sending(req); err != nil {
			return err
		}
		if req.Method == methodInitialize {
			// The refused server/discover is history once initialize goes.
			observationFrom(ctx).forgetStatus()
		}
	}
	err := c.Connection.Write(ctx, msg)
	if err != nil && req != nil {
		c.hs.writeFailed(ctx, req, err)
	}
	return err
}

func (c *handshakeConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		c.hs.readFailed(err)
		return nil, err
	}
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.hs.received(resp)
	}
	return msg, nil
}
