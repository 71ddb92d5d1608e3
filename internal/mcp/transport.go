package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-json-experiment/json"
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

	mu   sync.Mutex
	seen seen
}

// seen is what an observation recorded.
type seen struct {
	status int // the latest HTTP error status
	// serverText is the message of the JSON-RPC error (or the short plain
	// text) the server sent with that status: its own words for the failure.
	serverText string
	authErr    error   // why signing in failed
	tooLarge   bool    // a body went past MaxResponseBytes
	badType    *string // the content type of a 2xx reply that is not MCP's
}

// sawStatus records an HTTP error status and the server's text with it.
// The latest wins: after a fallback, the status of the request that ended
// the operation is the one to report.
func (o *observation) sawStatus(code int, text string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seen.status, o.seen.serverText = code, text
}

// sawContentType records a successful reply that is neither JSON nor an
// event stream: whatever answered is not an MCP server.
func (o *observation) sawContentType(ct string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.seen.badType == nil {
		o.seen.badType = &ct
	}
}

// sawTooLarge also aborts the operation: otherwise the SDK would treat the
// cut stream as a dropped connection and spend seconds reconnecting.
func (o *observation) sawTooLarge() {
	o.mu.Lock()
	o.seen.tooLarge = true
	o.mu.Unlock()
	o.abort(errResponseTooLarge)
}

// snapshot returns what was seen so far; a nil observation saw nothing.
func (o *observation) snapshot() seen {
	if o == nil {
		return seen{}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.seen
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
	// headers are the configured ones, sent to the server's origin only.
	headers map[string]string
	// version is the protocol an initialize negotiated, sent as
	// Mcp-Protocol-Version when the SDK did not set it (see handshake).
	version *atomic.Pointer[string]
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	obs := observationFrom(req.Context())
	ours := sameOrigin(req.URL, t.origin)
	version := t.version.Load()
	if ours && (t.token != "" || len(t.headers) > 0 || version != nil && req.Header.Get("Mcp-Protocol-Version") == "") {
		req = req.Clone(req.Context()) // a RoundTripper must not modify its request
		for name, value := range t.headers {
			req.Header.Set(name, value)
		}
		if t.token != "" {
			req.Header.Set("Authorization", "Bearer "+t.token)
		}
		if version != nil && req.Header.Get("Mcp-Protocol-Version") == "" {
			req.Header.Set("Mcp-Protocol-Version", *version)
		}
	}
	resp, err := roundTripHandshake(req, t.base.RoundTrip)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 && obs != nil {
		obs.sawStatus(resp.StatusCode, peekErrorText(resp))
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 && resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusNoContent && resp.ContentLength != 0 && obs != nil && req.Method == http.MethodPost {
		if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct != "application/json" && ct != "text/event-stream" {
			obs.sawContentType(ct)
		}
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
func newHTTPClient(s Server, base http.RoundTripper, version *atomic.Pointer[string]) (*http.Client, error) {
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
	if version == nil {
		version = new(atomic.Pointer[string])
	}
	return &http.Client{
		Transport: &authTransport{base: base, origin: origin, token: s.bearer(), headers: s.Headers, version: version},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}, nil
}

// sawAuthError records why a sign-in failed.
func (o *observation) sawAuthError(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seen.authErr = err
}

// forgetStatus drops the recorded status; a nil observation has none.
func (o *observation) forgetStatus() {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seen.status, o.seen.serverText = 0, ""
}

// maxErrorBody bounds what is read of an error reply to find its message.
const maxErrorBody = 64 << 10

// peekErrorText reads the start of an error reply and puts it back: the SDK
// drops a JSON-RPC error whose id is null (what TypeScript-SDK servers send
// with HTTP 400), so its message is taken here. It is the JSON-RPC error's
// message, or "": other bodies (HTML pages, proxies' text) are never quoted.
func peekErrorText(resp *http.Response) string {
	if resp.Body == nil || resp.Body == http.NoBody {
		return ""
	}
	head, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), resp.Body), resp.Body}
	if err != nil {
		return ""
	}
	return errorText(resp.Header.Get("Content-Type"), head)
}

// errorText finds the server's message in an error body.
func errorText(contentType string, body []byte) string {
	if ct, _, _ := mime.ParseMediaType(contentType); ct == "application/json" {
		var msg struct {
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Error != nil {
			return strings.TrimSpace(msg.Error.Message)
		}
	}
	return ""
}
