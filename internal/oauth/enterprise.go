package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// grantJWTBearer is RFC 7523's grant, which carries the ID-JAG.
const grantJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// enterprise is enterprise-managed authorization (SEP-990): the ID token
// of the enterprise's identity provider (configured, or from an OpenID
// Connect sign-in there) is exchanged at the IdP for an ID-JAG naming this
// server (RFC 8693), and the ID-JAG for an access token at the server's
// authorization server (RFC 7523). The token is stored like a person's
// sign-in. The SDK's extauth.EnterpriseHandler does these steps too, but
// wants the authorization server known in advance and authenticates the
// client in the request body only; this one discovers it from the server
// and uses the token endpoint's method.
type enterprise struct {
	h *Handler

	mu sync.Mutex
	ts oauth2.TokenSource
}

// TokenSource is the last sign-in's, else the stored one while it is
// usable (unexpired, or refreshable), else none: the server's 401 then
// starts a new exchange instead of failing on an expired token.
func (e *enterprise) TokenSource(context.Context) (oauth2.TokenSource, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ts != nil {
		return e.ts, nil
	}
	e.h.mu.Lock()
	r := e.h.record
	e.h.mu.Unlock()
	if r == nil || (r.RefreshToken == "" && !r.Expiry.IsZero() && time.Until(r.Expiry) < time.Minute) {
		return nil, nil
	}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, e.h.opts.HTTP)
	e.ts = &saving{base: r.config().TokenSource(ctx, r.token()), store: e.h.opts.Store, record: *r}
	return e.ts, nil
}

// Authorize runs the whole flow after the server's 401 (or 403
// insufficient_scope, with the scopes it asks for).
func (e *enterprise) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer drain(resp)
	client := newLegacyIssuer(e.h.opts.HTTP, e.h.opts.Server)
	cs, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	prm, err := discoverResource(ctx, cs, req.URL.String(), client)
	if err != nil {
		return err
	}
	asm, err := findTokenMeta(ctx, prm.AuthorizationServers[0], client, false)
	if err != nil {
		return fmt.Errorf("authorization server metadata: %w", err)
	}
	if asm == nil { // 2025-03-26: the default endpoint
		asm = &tokenMeta{Issuer: prm.AuthorizationServers[0], TokenEndpoint: strings.TrimRight(prm.AuthorizationServers[0], "/") + "/token"}
	}
	scopes := challengeScopes(cs)
	if len(scopes) == 0 {
		scopes = prm.ScopesSupported
	}
	scopes = e.h.scopes(scopes)
	idToken, err := e.idToken(ctx)
	if err != nil {
		return err
	}
	jag, err := e.exchange(ctx, idToken, asm.Issuer, prm.Resource, scopes)
	if err != nil {
		return err
	}
	cfg, tok, err := e.jwtBearer(ctx, asm, jag, prm.Resource)
	if err != nil {
		return err
	}
	cfg.Scopes = scopes
	bg := context.WithValue(context.Background(), oauth2.HTTPClient, e.h.opts.HTTP)
	ts, err := e.h.persist(bg, cfg, tok)
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.ts = ts
	e.mu.Unlock()
	return nil
}

// idToken is the configured one, else one from signing in at the IdP in
// the browser, which only `tiny-go mcp login` may open.
func (e *enterprise) idToken(ctx context.Context) (string, error) {
	idp := e.h.cfg.IdP
	if idp.IDToken != "" {
		exp, err := idTokenExpiry(idp.IDToken)
		if err != nil {
			return "", fmt.Errorf(`"oauth.idp.idToken" is not an ID token (%w): set it to the identity provider's ID token (a JWT)`, err)
		}
		if !exp.IsZero() && time.Now().After(exp) {
			return "", fmt.Errorf(`the ID token in "oauth.idp.idToken" expired at %s: get a new one from your identity provider`, exp.UTC().Format(time.RFC3339))
		}
		return idp.IDToken, nil
	}
	if !e.h.opts.Interactive {
		return "", &LoginNeededError{Alias: e.h.opts.Alias}
	}
	redirect, err := e.h.loopback()
	if err != nil {
		return "", err
	}
	tok, err := extauth.PerformOIDCLogin(ctx, &extauth.OIDCLoginConfig{
		IssuerURL:   idp.Issuer,
		Credentials: idpCredentials(idp),
		RedirectURL: redirect.url(),
		Scopes:      []string{"openid"},
		HTTPClient:  e.h.opts.HTTP,
	}, redirect.fetcher(e.h.opts.Browser))
	if err != nil {
		return "", fmt.Errorf("signing in at the identity provider %s: %w", idp.Issuer, err)
	}
	id, _ := tok.Extra("id_token").(string)
	if id == "" {
		return "", fmt.Errorf("the identity provider %s signed in without an ID token: check that tiny-go's client there may use OpenID Connect", idp.Issuer)
	}
	return id, nil
}

func idpCredentials(idp *IdPConfig) *oauthex.ClientCredentials {
	c := &oauthex.ClientCredentials{ClientID: idp.ClientID}
	if idp.ClientSecret != "" {
		c.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: idp.ClientSecret}
	}
	return c
}

// exchange trades the ID token for an ID-JAG at the IdP's token endpoint
// (RFC 8693): audience is the server's authorization server, resource the
// server itself.
func (e *enterprise) exchange(ctx context.Context, idToken, audience, resource string, scopes []string) (string, error) {
	idp := e.h.cfg.IdP
	meta, err := findTokenMeta(ctx, idp.Issuer, e.h.opts.HTTP, true)
	if err != nil || meta == nil {
		return "", fmt.Errorf(`the identity provider %s publishes no usable metadata (OpenID Connect or RFC 8414)%s: check "oauth.idp.issuer"`, idp.Issuer, because(err))
	}
	tok, err := oauthex.ExchangeToken(ctx, meta.TokenEndpoint, &oauthex.TokenExchangeRequest{
		RequestedTokenType: oauthex.TokenTypeIDJAG,
		Audience:           audience,
		Resource:           resource,
		Scope:              scopes,
		SubjectToken:       idToken,
		SubjectTokenType:   oauthex.TokenTypeIDToken,
	}, idpCredentials(idp), e.h.opts.HTTP)
	if err != nil {
		again := `get a new ID token for "oauth.idp.idToken"`
		if idp.IDToken == "" {
			again = fmt.Sprintf("sign in again with `tiny-go mcp login %s`", e.h.opts.Alias)
		}
		return "", &refusedError{err: err, msg: fmt.Sprintf(
			"the identity provider refused the token exchange: %s: %s, or ask its administrator to let client %q use this server (%s)",
			describeTokenError(err), again, idp.ClientID, resource)}
	}
	if t, _ := tok.Extra("issued_token_type").(string); t != oauthex.TokenTypeIDJAG {
		return "", fmt.Errorf("the identity provider issued a %q instead of an ID-JAG: it does not support enterprise-managed authorization for this server", t)
	}
	return tok.AccessToken, nil
}

// jwtBearer presents the ID-JAG at the authorization server's token
// endpoint (RFC 7523), authenticated as the configured client with the
// endpoint's method.
func (e *enterprise) jwtBearer(ctx context.Context, asm *tokenMeta, jag, resource string) (*oauth2.Config, *oauth2.Token, error) {
	style := tokenAuthStyle(asm.AuthMethods, e.h.cfg.ClientSecret != "")
	cc := clientcredentials.Config{
		ClientID:     e.h.cfg.ClientID,
		ClientSecret: e.h.cfg.ClientSecret,
		TokenURL:     asm.TokenEndpoint,
		AuthStyle:    style,
		// clientcredentials lets grant_type be replaced; it sends no code.
		EndpointParams: url.Values{"grant_type": {grantJWTBearer}, "assertion": {jag}, "resource": {resource}},
	}
	tok, err := cc.Token(context.WithValue(ctx, oauth2.HTTPClient, e.h.opts.HTTP))
	if err != nil {
		return nil, nil, &refusedError{err: err, msg: fmt.Sprintf(
			"the authorization server refused the ID-JAG: %s: %s", describeTokenError(err), e.bearerHint(err))}
	}
	cfg := &oauth2.Config{ClientID: cc.ClientID, ClientSecret: cc.ClientSecret, Endpoint: oauth2.Endpoint{TokenURL: cc.TokenURL, AuthStyle: style}}
	return cfg, tok, nil
}

func (e *enterprise) bearerHint(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && (re.ErrorCode == "invalid_client" || re.ErrorCode == "unauthorized_client") {
		return fmt.Sprintf(`check "oauth.clientId" (%q) and "oauth.clientSecret": they must be tiny-go's client registered at the server's authorization server`, e.h.cfg.ClientID)
	}
	return fmt.Sprintf("ask the server's administrator to accept ID-JAGs from %s for client %q", e.h.cfg.IdP.Issuer, e.h.cfg.ClientID)
}

// tokenAuthStyle is how the token request authenticates the client: in
// the body without a secret; else client_secret_basic, RFC 8414's
// default, unless the endpoint lists only client_secret_post.
func tokenAuthStyle(methods []string, secret bool) oauth2.AuthStyle {
	if !secret {
		return oauth2.AuthStyleInParams
	}
	for _, m := range methods {
		if m == "client_secret_basic" {
			return oauth2.AuthStyleInHeader
		}
	}
	for _, m := range methods {
		if m == "client_secret_post" {
			return oauth2.AuthStyleInParams
		}
	}
	return oauth2.AuthStyleInHeader
}

// refusedError is one line for the user; the response it came from stays
// reachable with errors.As.
type refusedError struct {
	msg string
	err error
}

func (e *refusedError) Error() string { return e.msg }
func (e *refusedError) Unwrap() error { return e.err }

// describeTokenError is an OAuth error response in a few words: its code
// and description, else the HTTP status, else the failure itself.
func describeTokenError(err error) string {
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		return oneLine(innermostError(err).Error())
	}
	if re.ErrorCode == "" && re.Response != nil {
		return fmt.Sprintf("HTTP %d", re.Response.StatusCode)
	}
	return re.ErrorCode + describeOAuthError(oneLine(re.ErrorDescription))
}

func because(err error) string {
	if err == nil {
		return ""
	}
	return " (" + oneLine(err.Error()) + ")"
}

func innermostError(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
