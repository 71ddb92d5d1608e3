package mcp

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"

	"github.com/tiny-agent/tiny-go/internal/oauth"
)

// oauthHTTPTimeout bounds each discovery, registration and token request.
const oauthHTTPTimeout = 30 * time.Second

// newOAuthHandler is the sign-in of a Streamable HTTP server that carries
// no credentials of its own (tokenEnv, an Authorization header); nil when
// the run has no token store or the server cannot use one.
func newOAuthHandler(s Server, opts Options) (auth.OAuthHandler, error) {
	if opts.OAuth == nil || opts.OAuth.Store == nil || s.SSE || s.token != nil || hasAuthorization(s.Headers) {
		return nil, nil
	}
	base := opts.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	h, err := oauth.NewHandler(oauth.Options{
		Alias:       s.Alias,
		Server:      s.Endpoint,
		Config:      s.OAuth,
		Store:       opts.OAuth.Store,
		HTTP:        &http.Client{Transport: base, Timeout: oauthHTTPTimeout},
		Interactive: opts.OAuth.Interactive,
		Browser:     opts.OAuth.Browser,
	})
	if err != nil {
		return nil, err
	}
	return &recordingAuth{inner: h}, nil
}

func hasAuthorization(headers map[string]string) bool {
	for name := range headers {
		if strings.EqualFold(name, "Authorization") {
			return true
		}
	}
	return false
}

// recordingAuth notes why a sign-in failed in the operation's observation:
// the SDK reports it only as the HTTP status that started it.
type recordingAuth struct {
	inner auth.OAuthHandler
}

func (r *recordingAuth) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	return r.inner.TokenSource(ctx)
}

func (r *recordingAuth) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	err := r.inner.Authorize(ctx, req, resp)
	if err != nil {
		if obs := observationFrom(ctx); obs != nil {
			obs.sawAuthError(err)
		}
	}
	return err
}
