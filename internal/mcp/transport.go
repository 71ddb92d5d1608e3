package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
)

// MaxResponseBytes bounds every response body from an MCP server.
const MaxResponseBytes = 10 << 20

// errResponseTooLarge is what reading past MaxResponseBytes returns.
var errResponseTooLarge = fmt.Errorf("response body exceeds %d MB", MaxResponseBytes>>20)

// observation records what the transport saw for the requests of one
// operation (connect, or one call), so a failure can be described without
// the SDK's error text, which may quote a server's response.
type observation struct {
	abort context.CancelCauseFunc // ends the operation early

	mu       sync.Mutex
	status   int // first HTTP error status
	tooLarge bool
}

func (o *observation) sawStatus(code int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.status == 0 {
		o.status = code
	}
}

// sawTooLarge also aborts the operation: otherwise the SDK would treat the
// cut stream as a dropped connection and spend seconds reconnecting.
func (o *observation) sawTooLarge() {
	o.mu.Lock()
	o.tooLarge = true
	o.mu.Unlock()
	o.abort(errResponseTooLarge)
}

func (o *observation) snapshot() (status int, tooLarge bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.status, o.tooLarge
}

type observationKey struct{}

// observe starts an observed operation. The SDK builds its HTTP requests
// from the caller's context, so the transport finds the observation there.
// stop must be called when the operation ends.
func observe(ctx context.Context) (_ context.Context, _ *observation, stop func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	o := &observation{abort: cancel}
	return context.WithValue(ctx, observationKey{}, o), o, func() { cancel(context.Canceled) }
}

func observationFrom(ctx context.Context) *observation {
	o, _ := ctx.Value(observationKey{}).(*observation)
	return o
}

// authTransport adds the bearer token to requests for the server's own
// origin and refuses oversized response bodies.
type authTransport struct {
	base   http.RoundTripper
	origin *url.URL
	token  string // "" sends no Authorization header
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	obs := observationFrom(req.Context())
	if t.token != "" && sameOrigin(req.URL, t.origin) {
		req = req.Clone(req.Context()) // a RoundTripper must not modify its request
		req.Header.Set("Authorization", "Bearer "+t.token)
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 && obs != nil {
		obs.sawStatus(resp.StatusCode)
	}
	if resp.ContentLength > MaxResponseBytes {
		resp.Body.Close()
		if obs != nil {
			obs.sawTooLarge()
		}
		return nil, errResponseTooLarge
	}
	resp.Body = &limitedBody{body: resp.Body, left: MaxResponseBytes, obs: obs}
	return resp, nil
}

func sameOrigin(a, b *url.URL) bool {
	return a.Scheme == b.Scheme && a.Host == b.Host
}

// limitedBody fails the read that would go past the limit, so an oversized
// body is refused rather than silently cut.
type limitedBody struct {
	body io.ReadCloser
	left int64
	obs  *observation
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body of exactly the limit from a longer one.
		var probe [1]byte
		n, err := b.body.Read(probe[:])
		if n > 0 {
			if b.obs != nil {
				b.obs.sawTooLarge()
			}
			return 0, errResponseTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.body.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.body.Close() }

// newHTTPClient builds the client for one server: no redirects (the token
// must not follow one), bearer auth, bounded bodies. No overall timeout:
// calls are bounded by their contexts.
func newHTTPClient(s Server, base http.RoundTripper) (*http.Client, error) {
	origin, err := url.Parse(s.Endpoint)
	if err != nil {
		return nil, err
	}
	if base == nil {
		dt, ok := http.DefaultTransport.(*http.Transport)
		if !ok {
			return nil, errors.New("http.DefaultTransport is not an *http.Transport")
		}
		base = dt.Clone()
	}
	return &http.Client{
		Transport: &authTransport{base: base, origin: origin, token: s.bearer()},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}, nil
}
