package provider

import (
	"io"
	"net/http"
	"net/url"
)

// Wire is a wire protocol other than Chat Completions (the Anthropic
// Messages API) spoken over the Client's transport, so every protocol gets
// the same timeouts, size bound and error mapping (NewWire). HTTP error
// statuses are summarized by the Client from the body's error.message.
type Wire interface {
	// URL resolves the request URL of a base endpoint ("" is the default).
	URL(endpoint string) (*url.URL, error)
	// Encode returns the request body.
	Encode(req Request) ([]byte, error)
	// Header sets the protocol's headers, credentials included.
	Header(h http.Header, apiKey string)
	// Decode reads a 2xx response body. Protocol failures are *Error with
	// messages free of apiKey; read errors are returned as they are.
	Decode(body io.Reader, apiKey string, onDelta func(Delta)) (Response, error)
}

// encode encodes req for the client's protocol.
func (c *Client) encode(req Request) (requestBody, error) {
	if c.wire == nil {
		return c.enc.encode(req)
	}
	b, err := c.wire.Encode(req)
	if err != nil {
		return requestBody{}, err
	}
	return requestBody{parts: [][]byte{b}, size: int64(len(b))}, nil
}

// SSEReader splits a text/event-stream into the data of its events (see
// the Chat Completions reader, which it shares).
type SSEReader struct{ s *sseReader }

// NewSSEReader reads events from r.
func NewSSEReader(r io.Reader) *SSEReader { return &SSEReader{newSSEReader(r)} }

// Next returns the data of the next event that has data, io.EOF at the
// end of the stream, or the read error.
func (r *SSEReader) Next() ([]byte, error) { return r.s.next() }

// Partial reports that the event last returned was cut off by the end of
// the stream.
func (r *SSEReader) Partial() bool { return r.s.partial }

// Sanitize makes provider text safe for a one-line error message (see
// sanitize): apiKey removed, white space folded, cut to limit runes.
func Sanitize(s, apiKey string, limit int) string { return sanitize(s, apiKey, limit) }
