package oauth

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// legacyIssuer adapts 2025-03-26 servers, which publish no protected
// resource metadata and are their own authorization server: the metadata
// at their origin may name an issuer on a path of that origin
// ("https://h/oauth"), which the SDK's RFC 8414 check refuses against the
// origin it derived. Once the protected-resource lookups of the server's
// origin have all come back 404, such an issuer is read as the origin.
// An issuer on another origin is left alone, so the check still stops
// a metadata document that speaks for someone else.
type legacyIssuer struct {
	base   http.RoundTripper
	origin string // scheme://host of the MCP server

	mu    sync.Mutex
	noPRM bool // the origin answered 404 for protected-resource metadata
}

func newLegacyIssuer(client *http.Client, server string) *http.Client {
	u, err := url.Parse(server)
	if err != nil {
		return client
	}
	base := client.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c := *client
	c.Transport = &legacyIssuer{base: base, origin: u.Scheme + "://" + u.Host}
	return &c
}

func (l *legacyIssuer) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.base.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet || originOf(req.URL) != l.origin {
		return resp, err
	}
	switch {
	case strings.HasPrefix(req.URL.Path, "/.well-known/oauth-protected-resource"):
		l.mu.Lock()
		l.noPRM = resp.StatusCode == http.StatusNotFound
		l.mu.Unlock()
	case req.URL.Path == "/.well-known/oauth-authorization-server" && resp.StatusCode == http.StatusOK:
		l.mu.Lock()
		legacy := l.noPRM
		l.mu.Unlock()
		if legacy {
			resp.Body = l.rewriteIssuer(resp.Body)
		}
	}
	return resp, nil
}

// rewriteIssuer replaces an issuer on the server's origin with the origin.
func (l *legacyIssuer) rewriteIssuer(body io.ReadCloser) io.ReadCloser {
	defer body.Close()
	data, err := io.ReadAll(io.LimitReader(body, 1<<20))
	if err != nil {
		return io.NopCloser(bytes.NewReader(data))
	}
	var meta map[string]jsontext.Value
	var issuer string
	if json.Unmarshal(data, &meta) != nil || json.Unmarshal(meta["issuer"], &issuer) != nil {
		return io.NopCloser(bytes.NewReader(data))
	}
	if u, err := url.Parse(issuer); err != nil || originOf(u) != l.origin || issuer == l.origin {
		return io.NopCloser(bytes.NewReader(data))
	}
	meta["issuer"], _ = json.Marshal(l.origin)
	out, err := json.Marshal(meta, json.Deterministic(true))
	if err != nil {
		return io.NopCloser(bytes.NewReader(data))
	}
	return io.NopCloser(bytes.NewReader(out))
}

func originOf(u *url.URL) string {
	return u.Scheme + "://" + u.Host
}
