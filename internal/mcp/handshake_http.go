package mcp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Over HTTP the handshake is watched at the transport rather than by
// wrapping the SDK's connection: a wrapped connection hides the hook by
// which the SDK tells its Streamable HTTP connection that the session is
// initialized, and without it the standalone GET stream (requests the
// server starts, such as elicitation) never opens.

type handshakeKey struct{}

// withHandshake marks ctx as a handshake's, for the HTTP transport.
func withHandshake(ctx context.Context, hs *handshake) context.Context {
	return context.WithValue(ctx, handshakeKey{}, hs)
}

func handshakeFrom(ctx context.Context) *handshake {
	hs, _ := ctx.Value(handshakeKey{}).(*handshake)
	return hs
}

// rpcCall is the method and id of a JSON-RPC request body.
type rpcCall struct {
	Method string         `json:"method"`
	ID     jsontext.Value `json:"id"`
}

// peekCall reads the JSON-RPC call a POST carries, leaving the body to be
// sent; ok is false for anything else (a notification, a response).
func peekCall(req *http.Request) (rpcCall, jsonrpc.ID, bool) {
	if req.Method != http.MethodPost || req.GetBody == nil {
		return rpcCall{}, jsonrpc.ID{}, false
	}
	body, err := req.GetBody()
	if err != nil {
		return rpcCall{}, jsonrpc.ID{}, false
	}
	defer body.Close()
	var c rpcCall
	if err := json.UnmarshalRead(io.LimitReader(body, MaxResponseBytes), &c); err != nil || c.Method == "" || len(c.ID) == 0 {
		return rpcCall{}, jsonrpc.ID{}, false
	}
	var raw any
	if err := json.Unmarshal(c.ID, &raw); err != nil {
		return rpcCall{}, jsonrpc.ID{}, false
	}
	id, err := jsonrpc.MakeID(raw)
	if err != nil || !id.IsValid() {
		return rpcCall{}, jsonrpc.ID{}, false
	}
	return c, id, true
}

// roundTripHandshake sends req, applying the handshake's rules when req is
// server/discover or initialize of a handshake: an initialize the fallback
// rule refuses is not sent, and the reply to server/discover decides
// whether one may follow.
func roundTripHandshake(req *http.Request, send func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	hs := handshakeFrom(req.Context())
	if hs == nil {
		return send(req)
	}
	call, id, ok := peekCall(req)
	if !ok || call.Method != methodDiscover && call.Method != methodInitialize {
		return send(req)
	}
	if err := hs.sending(&jsonrpc.Request{ID: id, Method: call.Method}); err != nil {
		return nil, err
	}
	if call.Method == methodInitialize {
		// The refused server/discover is history once initialize goes.
		observationFrom(req.Context()).forgetStatus()
	}
	resp, err := send(req)
	if call.Method != methodDiscover {
		return resp, err
	}
	hs.discoverReply(id, resp, err)
	return resp, err
}

// discoverReply records the HTTP reply to server/discover: any HTTP 400
// is a server that does not know it (TypeScript-SDK servers refuse it with
// an error whose id is null, "Unsupported protocol version", or "Invalid
// or missing session ID" when they keep sessions, and the SDK drops that
// reply unread); another status, or no reply, ends the handshake. A JSON
// reply says itself; an event stream is left to the SDK, which falls back
// only when it holds an error.
func (h *handshake) discoverReply(id jsonrpc.ID, resp *http.Response, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.discoverID != id {
		return
	}
	h.answered = true
	switch {
	case err != nil:
		h.discoverErr = err
	case resp.StatusCode == http.StatusBadRequest:
		h.discoverErr, h.mayFallBack = fmt.Errorf("HTTP %d", resp.StatusCode), true
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		h.discoverErr = fmt.Errorf("HTTP %d", resp.StatusCode)
	default:
		rpcErr, isJSON := peekReplyError(resp)
		switch {
		case rpcErr != nil:
			h.discoverErr, h.mayFallBack = rpcErr, cannotSpeak(rpcErr)
		case isJSON:
			// A result without a common version makes the SDK fall back:
			// the server said which versions it speaks.
			h.mayFallBack = true
		default:
			h.mayFallBack = true
		}
	}
}

// peekReplyError reads a JSON reply's error and puts the body back.
func peekReplyError(resp *http.Response) (rpcErr *jsonrpc.Error, isJSON bool) {
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct != "application/json" || resp.Body == nil {
		return nil, false
	}
	head, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	if err != nil {
		return nil, true
	}
	var msg struct {
		Error *struct {
			Code    int64          `json:"code"`
			Message string         `json:"message"`
			Data    jsontext.Value `json:"data"`
		} `json:"error"`
	}
	if json.Unmarshal(head, &msg) != nil || msg.Error == nil {
		return nil, true
	}
	return &jsonrpc.Error{Code: msg.Error.Code, Message: msg.Error.Message}, true
}
