package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// MaxStepUps bounds the sign-ins one handler runs for 403
// insufficient_scope: a server that never accepts the new scopes must not
// send the user to the browser forever.
const MaxStepUps = 2

// LoginNeededError is a server asking for a sign-in that the run may not
// start (no terminal flow outside `tiny-go mcp login`).
type LoginNeededError struct {
	Alias string
}

func (e *LoginNeededError) Error() string {
	return fmt.Sprintf("sign-in needed: run `tiny-go mcp login %s`", e.Alias)
}

// Options configure a Handler.
type Options struct {
	Alias  string
	Server string  // the canonical MCP endpoint URL
	Config *Config // nil: defaults
	Store  *Store
	// HTTP makes discovery, registration and token requests.
	HTTP *http.Client
	// Interactive allows the browser flow on a 401 (`tiny-go mcp login`).
	// Without it a 401 is a LoginNeededError; a step-up (403
	// insufficient_scope) of a server signed in before still opens the
	// browser, since the user chose to sign in there.
	Interactive bool
	// Browser shows the authorization URL to the user.
	Browser Browser
}

// Handler is an auth.OAuthHandler for one MCP server: the SDK's
// authorization code flow (or client credentials) around the token store.
type Handler struct {
	opts   Options
	cfg    Config
	record *Record // the stored sign-in, nil without one

	mu       sync.Mutex
	inner    auth.OAuthHandler
	stepUps  int
	redirect *loopback
}

var _ auth.OAuthHandler = (*Handler)(nil)

// NewHandler loads the stored sign-in of the server, if any.
func NewHandler(opts Options) (*Handler, error) {
	h := &Handler{opts: opts}
	if opts.Config != nil {
		h.cfg = *opts.Config
	}
	if opts.HTTP == nil {
		h.opts.HTTP = http.DefaultClient
	}
	if h.cfg.Grant == GrantClientCredentials {
		inner, err := newClientCredentials(h.cfg, h.opts.HTTP)
		if err != nil {
			return nil, err
		}
		h.inner = inner
		return h, nil
	}
	if !opts.Interactive {
		// `tiny-go mcp login` signs in afresh; a run uses what it stored.
		r, err := opts.Store.Load(opts.Server)
		if err != nil {
			return nil, err
		}
		h.record = r
	}
	if h.cfg.Grant == GrantEnterprise {
		h.inner = &enterprise{h: h}
		return h, nil
	}
	inner, err := h.newAuthorizationCode(allRegistrations)
	if err != nil {
		return nil, err
	}
	h.inner = inner
	return h, nil
}

// TokenSource implements auth.OAuthHandler.
func (h *Handler) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	inner := h.inner
	h.mu.Unlock()
	return inner.TokenSource(ctx)
}

// Authorize implements auth.OAuthHandler: the SDK calls it after a 401 or
// 403 and retries the request once when it returns nil.
func (h *Handler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	if h.cfg.Grant == GrantClientCredentials {
		return h.inner.Authorize(ctx, req, resp)
	}
	stepUp := resp.StatusCode == http.StatusForbidden && InsufficientScope(resp.Header)
	switch {
	case resp.StatusCode == http.StatusForbidden && !stepUp:
		drain(resp)
		return errors.New("the server refused access (HTTP 403)")
	case !h.opts.Interactive && !h.signsInAlone() && (!stepUp || h.record == nil):
		drain(resp)
		return &LoginNeededError{Alias: h.opts.Alias}
	}
	if stepUp {
		h.mu.Lock()
		h.stepUps++
		n := h.stepUps
		h.mu.Unlock()
		if n > MaxStepUps {
			drain(resp)
			return fmt.Errorf("the server still asks for more scopes after %d sign-ins", MaxStepUps)
		}
	}
	if h.cfg.Grant == GrantEnterprise {
		return h.inner.Authorize(ctx, req, resp)
	}
	inner, err := h.registeredHandler(ctx, req, resp)
	if err != nil {
		drain(resp)
		return err
	}
	h.mu.Lock()
	h.inner = inner
	h.mu.Unlock()
	return inner.Authorize(ctx, req, resp)
}

// loopback is the handler's one redirect target, made on first use.
func (h *Handler) loopback() (*loopback, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.redirect == nil {
		r, err := newLoopback(h.cfg.CallbackPort, h.opts.Interactive)
		if err != nil {
			return nil, err
		}
		h.redirect = r
	}
	return h.redirect, nil
}

// signsInAlone: an enterprise sign-in with a configured ID token needs
// no browser, so a run may start it (like client credentials).
func (h *Handler) signsInAlone() bool {
	return h.cfg.Grant == GrantEnterprise && h.cfg.IdP != nil && h.cfg.IdP.IDToken != ""
}

func drain(resp *http.Response) {
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
}

// InsufficientScope reports a Bearer challenge with error="insufficient_scope".
func InsufficientScope(h http.Header) bool {
	cs, err := oauthex.ParseWWWAuthenticate(h.Values("WWW-Authenticate"))
	if err != nil {
		return false
	}
	return slices.ContainsFunc(cs, func(c oauthex.Challenge) bool {
		return c.Scheme == "bearer" && c.Params["error"] == "insufficient_scope"
	})
}

// newAuthorizationCode is the SDK's authorization code handler with
// tiny-go's loopback redirect, registration order and token store.
func (h *Handler) newAuthorizationCode(reg registration) (auth.OAuthHandler, error) {
	redirect, err := h.loopback()
	if err != nil {
		return nil, err
	}
	c := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              redirect.url(),
		AuthorizationCodeFetcher: redirect.fetcher(h.opts.Browser),
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs:            []string{redirect.url()},
			ClientName:              "tiny-go",
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
			TokenEndpointAuthMethod: "none",
		}},
		RequestRefreshToken: true,
		Client:              newLegacyIssuer(h.opts.HTTP, h.opts.Server),
		ScopeFilter:         h.scopes,
		NewTokenSource:      h.persist,
	}
	if reg != allRegistrations && reg != dynamicRegistration {
		c.DynamicClientRegistrationConfig = nil
	}
	if h.cfg.ClientMetadataURL != "" && (reg == allRegistrations || reg == metadataDocument) {
		c.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: h.cfg.ClientMetadataURL}
	}
	if h.cfg.ClientID != "" && (reg == allRegistrations || reg == preregistered) {
		creds := &oauthex.ClientCredentials{ClientID: h.cfg.ClientID}
		if h.cfg.ClientSecret != "" {
			creds.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: h.cfg.ClientSecret}
		}
		c.PreregisteredClient = creds
	}
	if r := h.record; r != nil {
		ctx := context.WithValue(context.Background(), oauth2.HTTPClient, h.opts.HTTP)
		c.InitialTokenSource = &saving{base: r.config().TokenSource(ctx, r.token()), store: h.opts.Store, record: *r}
	}
	return auth.NewAuthorizationCodeHandler(c)
}

// scopes are the configured ones, else the discovered ones together with
// what an earlier sign-in was granted (a step-up keeps what it had).
func (h *Handler) scopes(discovered []string) []string {
	if len(h.cfg.Scopes) > 0 {
		return slices.Clone(h.cfg.Scopes)
	}
	out := slices.Clone(discovered)
	if h.record != nil {
		for _, s := range h.record.Scopes {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// persist stores a new sign-in and keeps refreshed tokens stored.
func (h *Handler) persist(ctx context.Context, cfg *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
	r := Record{
		Server: h.opts.Server, ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret,
		AuthURL: cfg.Endpoint.AuthURL, TokenURL: cfg.Endpoint.TokenURL, AuthStyle: cfg.Endpoint.AuthStyle, Scopes: cfg.Scopes,
	}
	r.setToken(tok)
	if err := h.opts.Store.Save(&r); err != nil {
		return nil, fmt.Errorf("storing the token: %w", err)
	}
	h.mu.Lock()
	h.record = &r
	h.mu.Unlock()
	return &saving{base: cfg.TokenSource(ctx, tok), store: h.opts.Store, record: r}, nil
}

func (r *Record) setToken(tok *oauth2.Token) {
	r.AccessToken, r.TokenType, r.Expiry = tok.AccessToken, tok.TokenType, tok.Expiry
	if tok.RefreshToken != "" {
		r.RefreshToken = tok.RefreshToken
	}
}

// saving stores a refreshed token, so the next run starts with it.
type saving struct {
	base  oauth2.TokenSource
	store *Store

	mu     sync.Mutex
	record Record
}

func (s *saving) Token() (*oauth2.Token, error) {
	tok, err := s.base.Token()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if tok.AccessToken != s.record.AccessToken {
		s.record.setToken(tok)
		// A failed save costs a sign-in later, not this request.
		_ = s.store.Save(&s.record)
	}
	return tok, nil
}
