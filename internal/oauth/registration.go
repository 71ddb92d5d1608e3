package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// registration is how tiny-go gets a client at an authorization server.
type registration int

const (
	// allRegistrations leaves the choice to the SDK (its order: metadata
	// document, pre-registered, dynamic); only the handler that serves a
	// stored token before any sign-in is made with it.
	allRegistrations registration = iota
	metadataDocument
	dynamicRegistration
	preregistered
)

// errNoRegistration is an authorization server that offers no way in.
var errNoRegistration = errors.New(`the authorization server offers no client registration (neither a client ID metadata document nor dynamic registration): set "oauth.clientId" (and "clientSecret") to a client registered there for tiny-go`)

// chooseRegistration is issue #34's order: a client ID metadata document
// where the server supports one (and one is configured), else dynamic
// registration where the server offers it, else the pre-registered
// client of the config. The MCP spec (2025-11-25) suggests the
// pre-registered client first; see docs/mcp.md.
func chooseRegistration(cfg Config, asm *oauthex.AuthServerMeta) (registration, error) {
	switch {
	case cfg.ClientMetadataURL != "" && asm.ClientIDMetadataDocumentSupported:
		return metadataDocument, nil
	case asm.RegistrationEndpoint != "":
		return dynamicRegistration, nil
	case cfg.ClientID != "":
		return preregistered, nil
	}
	return 0, errNoRegistration
}

// registeredHandler is the SDK's authorization code handler offered only
// the registration chosen for the server's authorization server, found
// the way the SDK will find it (the SDK then discovers it again: two
// more GETs per sign-in, against a second copy of its order).
func (h *Handler) registeredHandler(ctx context.Context, req *http.Request, resp *http.Response) (auth.OAuthHandler, error) {
	client := newLegacyIssuer(h.opts.HTTP, h.opts.Server)
	cs, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	prm, err := discoverResource(ctx, cs, req.URL.String(), client)
	if err != nil {
		return nil, err
	}
	asm, err := authServerMetadata(ctx, prm.AuthorizationServers[0], client)
	if err != nil {
		return nil, err
	}
	reg, err := chooseRegistration(h.cfg, asm)
	if err != nil {
		return nil, err
	}
	return h.newAuthorizationCode(reg)
}

// authServerMetadata is the server's authorization server metadata, or
// the 2025-03-26 default endpoints when it publishes none.
func authServerMetadata(ctx context.Context, issuer string, client *http.Client) (*oauthex.AuthServerMeta, error) {
	asm, err := auth.GetAuthServerMetadata(ctx, issuer, client)
	if err != nil {
		return nil, fmt.Errorf("authorization server metadata: %w", err)
	}
	if asm == nil {
		base := strings.TrimRight(issuer, "/")
		asm = &oauthex.AuthServerMeta{Issuer: issuer, AuthorizationEndpoint: base + "/authorize", TokenEndpoint: base + "/token", RegistrationEndpoint: base + "/register"}
	}
	return asm, nil
}
