package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// callIDPrefix marks the ids of the requests tiny-go writes itself.
const callIDPrefix = "tiny-go/"

// clientCalls are requests to the client that tiny-go writes itself,
// because acp-go-sdk v0.13.0's types cannot say them: its
// elicitation/create has no sessionId, which the schema requires. frame
// hands their responses here instead of to the SDK.
type clientCalls struct {
	out     io.Writer // the lockedWriter the SDK writes to
	mu      sync.Mutex
	next    int
	waiting map[string]chan callResponse
}

// callResponse is a response's result or error.
type callResponse struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// callError is the client's error response to a call.
type callError struct {
	Method  string
	Code    int
	Message string
}

func (e *callError) Error() string {
	return fmt.Sprintf("%s: the client answered %d %s", e.Method, e.Code, e.Message)
}

// methodNotFound is JSON-RPC's code for a method the peer does not have.
const methodNotFound = -32601

// call sends one request and waits for its response or for ctx to end;
// then the client is told to drop the request ($/cancel_request).
func (c *clientCalls) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	c.mu.Lock()
	c.next++
	id := callIDPrefix + strconv.Itoa(c.next)
	ch := make(chan callResponse, 1)
	if c.waiting == nil {
		c.waiting = map[string]chan callResponse{}
	}
	c.waiting[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.waiting, id)
		c.mu.Unlock()
	}()
	msg, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	if _, err := c.out.Write(append(msg, '\n')); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			return nil, &callError{Method: method, Code: r.Error.Code, Message: r.Error.Message}
		}
		return r.Result, nil
	case <-ctx.Done():
		if note, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "$/cancel_request", "params": map[string]any{"requestId": id}}); err == nil {
			_, _ = c.out.Write(append(note, '\n'))
		}
		return nil, context.Cause(ctx)
	}
}

// deliver takes line (one checked JSON-RPC message) when it is the
// response to one of these calls.
func (c *clientCalls) deliver(line []byte) bool {
	if c == nil || !bytes.Contains(line, []byte(callIDPrefix)) {
		return false
	}
	var msg struct {
		ID     *string         `json:"id"`
		Method json.RawMessage `json:"method"`
		callResponse
	}
	if json.Unmarshal(line, &msg) != nil || msg.ID == nil || msg.Method != nil {
		return false
	}
	c.mu.Lock()
	ch, ok := c.waiting[*msg.ID]
	c.mu.Unlock()
	if ok {
		ch <- msg.callResponse
	}
	return ok
}
