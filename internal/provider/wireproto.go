package provider

import (
	"bytes"
	"errors"
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

// ReadEvents hands the data of each event of the text/event-stream r
// (blank events and "[DONE]" skipped) to apply until apply reports done.
// A stream that ends first is ErrCut, and so is an event apply finds
// malformed when the stream cut it off; other errors are returned as
// they are.
func ReadEvents(r io.Reader, apply func(data []byte) (done bool, err error)) error {
	s := newSSEReader(r)
	for {
		data, err := s.next()
		if err == io.EOF {
			return ErrCut()
		}
		if err != nil {
			return err
		}
		data = bytes.TrimSpace(data)
		if len(data) == 0 || string(data) == "[DONE]" {
			continue
		}
		done, err := apply(data)
		var pe *Error
		switch {
		case err != nil && s.partial && errors.As(err, &pe) && pe.Kind == KindMalformedResponse:
			return ErrCut() // cut inside the last event
		case err != nil:
			return err
		case done:
			return nil
		}
	}
}

// Sanitize makes provider text safe for a one-line error message (see
// sanitize): apiKey removed, white space folded, cut to limit runes.
func Sanitize(s, apiKey string, limit int) string { return sanitize(s, apiKey, limit) }
