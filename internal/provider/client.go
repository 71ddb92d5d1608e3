package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"time"
)

// Defaults of Config.
const (
	DefaultEndpoint         = "https://openrouter.ai/api/v1"
	DefaultConnectTimeout   = 10 * time.Second
	DefaultIdleTimeout      = 120 * time.Second
	DefaultMaxResponseBytes = 16 << 20
	DefaultRequestTimeout   = 10 * time.Minute
)

// Config configures a Client. The zero value of every field but APIKey
// selects a default.
type Config struct {
	// Endpoint is the base URL of an OpenAI-compatible API (TINY_ENDPOINT).
	// "/chat/completions" is appended unless the path already ends with it.
	Endpoint string
	// APIKey is sent as a bearer token; empty sends no Authorization.
	APIKey string
	// Header holds extra request headers; they override the client's own.
	Header http.Header
	// HTTPClient, when set, replaces the client's own. Its Timeout must be
	// zero (it would bound the whole stream); redirects should be disabled.
	// Connect timeout covers the time until the transport reports a
	// connection through httptrace (until response headers for transports
	// that do not).
	HTTPClient *http.Client
	// ConnectTimeout bounds establishing the connection.
	ConnectTimeout time.Duration
	// IdleTimeout is the longest time without progress (no response bytes)
	// once connected.
	IdleTimeout time.Duration
	// MaxResponseBytes bounds the (decompressed) response body.
	MaxResponseBytes int64
	// Reasoning is the reasoning effort sent as OpenRouter's reasoning
	// parameter; ReasoningDefault sends none.
	Reasoning string
	// UsageAccounting asks OpenRouter to report each request's cost.
	UsageAccounting bool
	// WebPlugin asks OpenRouter to search the web for every request (its
	// web plugin); the reply's url_citation annotations are kept and sent
	// back (annotations.go).
	WebPlugin bool
	// RequestTimeout bounds a whole request, however steadily the server
	// sends (keep-alive comments forever must not hang a run).
	RequestTimeout time.Duration
	// KeyVariable names where APIKey came from, so a 401/403 can say which
	// variable to fix.
	KeyVariable string
}

// Client is an OpenAI-compatible Chat Completions streaming client.
//
// It is written on net/http instead of openai-go on purpose: tiny-go needs
// one endpoint, and the runtime contract needs exact control of what a
// general SDK decides for you: no retries (openai-go retries by default and
// each physical request must be one durable attempt), a connect and an
// idle-stream timeout, a bounded response, and error messages that never
// quote a body or the API key. It never logs.
type Client struct {
	url      *url.URL
	apiKey   string
	header   http.Header
	http     *http.Client
	connect  time.Duration
	idle     time.Duration
	maxBytes int64
	total    time.Duration
	keyVar   string
	enc      requestEncoder
	// wire, when set, speaks another protocol than Chat Completions.
	wire Wire
}

var _ Provider = (*Client)(nil)

// New returns a client, or an error if the configuration is invalid.
func New(cfg Config) (*Client, error) {
	return NewWire(cfg, nil)
}

// NewWire returns a client that speaks w over the client's transport
// (timeouts, size bound, error mapping); nil w is Chat Completions.
func NewWire(cfg Config, w Wire) (*Client, error) {
	resolve := chatURL
	if w != nil {
		resolve = w.URL
	}
	u, err := resolve(cfg.Endpoint)
	if err != nil {
		return nil, err
	}
	c := &Client{
		url:      u,
		apiKey:   cfg.APIKey,
		header:   cfg.Header.Clone(),
		http:     cfg.HTTPClient,
		connect:  cfg.ConnectTimeout,
		idle:     cfg.IdleTimeout,
		maxBytes: cfg.MaxResponseBytes,
		total:    cfg.RequestTimeout,
		keyVar:   cfg.KeyVariable,
		wire:     w,
	}
	if !ValidReasoning(cfg.Reasoning) {
		return nil, fmt.Errorf("invalid reasoning effort %q: want off, low, medium or high", cfg.Reasoning)
	}
	c.enc.opts = encodeOptions{reasoning: cfg.Reasoning, usageAccounting: cfg.UsageAccounting, webPlugin: cfg.WebPlugin}
	if c.connect < 0 || c.idle < 0 || c.maxBytes < 0 || c.total < 0 {
		return nil, errors.New("provider timeouts and size limit must not be negative")
	}
	if c.connect == 0 {
		c.connect = DefaultConnectTimeout
	}
	if c.idle == 0 {
		c.idle = DefaultIdleTimeout
	}
	if c.maxBytes == 0 {
		c.maxBytes = DefaultMaxResponseBytes
	}
	if c.total == 0 {
		c.total = DefaultRequestTimeout
	}
	if c.http == nil {
		c.http = defaultHTTPClient(c.connect)
	}
	return c, nil
}

// chatURL resolves the chat completions URL of a base endpoint.
func chatURL(endpoint string) (*url.URL, error) {
	return EndpointURL(endpoint, DefaultEndpoint, "chat", "completions")
}

// EndpointURL resolves the URL of an API path (e.g. "chat",
// "completions") under a base endpoint (defaultEndpoint when empty): an
// endpoint that already ends with the path is used as it is.
func EndpointURL(endpoint, defaultEndpoint string, path ...string) (*url.URL, error) {
	if endpoint == "" {
		endpoint = defaultEndpoint
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("invalid provider endpoint: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("invalid provider endpoint %q: want an http or https URL with a host", u.Redacted())
	}
	u.Fragment, u.RawFragment = "", ""
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = strings.TrimRight(u.RawPath, "/")
	if !strings.HasSuffix(u.Path, "/"+strings.Join(path, "/")) {
		u = u.JoinPath(path...)
	}
	return u, nil
}

func defaultHTTPClient(connect time.Duration) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = connect
	return &http.Client{
		Transport: t,
		// A redirected POST is a second request; report it instead.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// URL returns the chat completions URL with any password redacted.
func (c *Client) URL() string { return c.url.Redacted() }

// streamOnce sends one request and reads the reply.
func (c *Client) streamOnce(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	body, err := c.encode(req)
	if err != nil {
		return Response{}, fmt.Errorf("encode provider request: %w", err)
	}
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	deadline := time.AfterFunc(c.total, func() { cancel(errRequestTimeout) })
	defer deadline.Stop()
	wd := startWatchdog(cancel, c.connect, c.idle)
	defer wd.stop()
	hreq, err := c.newRequest(rctx, body, wd)
	if err != nil {
		return Response{}, err
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		err = c.failure(ctx, rctx, err, "provider connection failed")
		markUnanswered(err)
		return Response{}, err
	}
	defer resp.Body.Close()
	wd.connected() // for transports that do not report GotConn
	r, err := c.read(resp, wd, onDelta)
	if err != nil {
		var pe *Error
		if errors.As(err, &pe) && pe.Status == http.StatusNotFound {
			c.notFoundHint(ctx, pe, req.Model)
		}
		return Response{}, c.failure(ctx, rctx, err, "provider stream ended before the reply finished")
	}
	return r, nil
}

func (c *Client) newRequest(ctx context.Context, body requestBody, wd *watchdog) (*http.Request, error) {
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn:              func(httptrace.GotConnInfo) { wd.connected() },
		WroteRequest:         func(httptrace.WroteRequestInfo) { wd.touch() },
		GotFirstResponseByte: wd.touch,
	})
	// Writing a large request body is progress too.
	reqBody := func() io.ReadCloser {
		return io.NopCloser(&limitedBody{r: body.reader(), n: body.size, wd: wd})
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url.String(), reqBody())
	if err != nil {
		return nil, fmt.Errorf("build provider request: %w", err)
	}
	hreq.ContentLength = body.size
	// GetBody lets the transport resend a request it could not write at
	// all (a kept-alive connection the server had just closed); the
	// server never saw it, so this is not a retry of the request.
	hreq.GetBody = func() (io.ReadCloser, error) { return reqBody(), nil }
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	hreq.Header.Set("User-Agent", "tiny-go")
	if c.wire != nil {
		c.wire.Header(hreq.Header, c.apiKey)
	} else if c.apiKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	for k, vs := range c.header {
		hreq.Header[http.CanonicalHeaderKey(k)] = vs
	}
	return hreq, nil
}

// read reads the response: an error status, a JSON reply or an SSE stream.
func (c *Client) read(resp *http.Response, wd *watchdog, onDelta func(Delta)) (Response, error) {
	body := &limitedBody{r: resp.Body, n: c.maxBytes, wd: wd}
	contentType := resp.Header.Get("Content-Type")
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, err := readAll(body, maxErrorBody)
		if err != nil && !errors.Is(err, errTooLarge) {
			return Response{}, err
		}
		e := statusError(resp.StatusCode, contentType, b, c.apiKey)
		classifyStatus(e, resp.Header, b, time.Now())
		c.keyHint(e)
		return Response{}, e
	}
	if c.wire != nil {
		return c.wire.Decode(body, c.apiKey, onDelta)
	}
	acc := newAccumulator(c.apiKey, onDelta)
	if mediaType, _, _ := mime.ParseMediaType(contentType); mediaType == "application/json" {
		return readJSON(body, acc)
	}
	return readSSE(body, acc)
}

// failure turns any error of a request into what Stream returns: the
// caller's context error, or an *Error with a one-line safe message.
// prefix describes a transport error in the current phase.
func (c *Client) failure(ctx, rctx context.Context, err error, prefix string) error {
	if ctx.Err() != nil {
		return fmt.Errorf("provider request: %w", ctx.Err())
	}
	var pe *Error
	if errors.As(err, &pe) {
		pe.Message = scrub(pe.Message, c.apiKey)
		return pe
	}
	switch context.Cause(rctx) {
	case errRequestTimeout:
		return &Error{Kind: KindTimeout, Message: "provider request took longer than " + seconds(c.total) + " (--request-timeout)"}
	case errConnectTimeout:
		return &Error{Kind: KindTimeout, Message: "provider connection timed out after " + seconds(c.connect)}
	case errIdleTimeout:
		return &Error{Kind: KindTimeout, Message: "provider sent no data for " + seconds(c.idle) + " (--idle-timeout " + seconds(c.idle) + "; raise it with --idle-timeout or TINY_IDLE_TIMEOUT)"}
	}
	if errors.Is(err, errTooLarge) {
		return &Error{Kind: KindResponseTooLarge, Message: "provider response exceeded " + byteSize(c.maxBytes)}
	}
	// The url.Error wrapper quotes the URL; its cause is what matters.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return &Error{Kind: KindTimeout, Message: "provider connection timed out: " + sanitize(err.Error(), c.apiKey, maxSummary)}
	}
	return &Error{Kind: KindConnectionFailed, Message: prefix + ": " + sanitize(err.Error(), c.apiKey, maxSummary)}
}

// seconds formats a timeout the way a user configures it.
func seconds(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return d.String()
}

func byteSize(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
