// Package oauth signs tiny-go in to MCP servers per the MCP authorization
// spec: discovery, client registration, the PKCE authorization code flow
// with a loopback redirect, client credentials, refresh, and a token store
// in the user's config directory. The protocol steps themselves are the
// official MCP Go SDK's (auth, oauthex) and golang.org/x/oauth2's; this
// package adds what a terminal program needs around them.
package oauth

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
)

// Grants a server's "oauth" config may name.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
	// GrantEnterprise is enterprise-managed authorization (the MCP
	// extension of SEP-990, "cross-app access"): an ID token of the
	// enterprise's identity provider is exchanged there for an ID-JAG
	// (RFC 8693), which the server's authorization server takes as a
	// JWT bearer grant (RFC 7523).
	GrantEnterprise = "enterprise"
)

// Config is the "oauth" member of an MCP server's configuration.
type Config struct {
	// Grant is GrantAuthorizationCode (the default: a person signs in
	// with `tiny-go mcp login`), GrantClientCredentials (a machine) or
	// GrantEnterprise (through the enterprise's identity provider).
	Grant string `json:"grant,omitzero"`
	// ClientID and ClientSecret are a pre-registered client. A person's
	// sign-in uses them only where the server takes neither a client ID
	// metadata document nor dynamic registration (chooseRegistration);
	// client credentials and enterprise sign-ins always do.
	ClientID     string `json:"clientId,omitzero"`
	ClientSecret string `json:"clientSecret,omitzero"`
	// ClientMetadataURL is the https URL of tiny-go's client ID metadata
	// document, where one is hosted.
	ClientMetadataURL string `json:"clientMetadataUrl,omitzero"`
	// Scopes override the discovered ones.
	Scopes []string `json:"scopes,omitzero"`
	// CallbackPort fixes the loopback redirect's port (some servers
	// register one exact redirect URI); 0 picks a free one.
	CallbackPort int `json:"callbackPort,omitzero"`
	// PrivateKeyFile and SigningAlgorithm make a client credentials grant
	// authenticate with a signed JWT (private_key_jwt) instead of a secret.
	PrivateKeyFile   string `json:"privateKeyFile,omitzero"`
	SigningAlgorithm string `json:"signingAlgorithm,omitzero"`
	// IdP is the enterprise identity provider of GrantEnterprise.
	IdP *IdPConfig `json:"idp,omitzero"`
}

// IdPConfig is where an enterprise sign-in gets its identity: tiny-go's
// client at the identity provider, and the ID token to exchange (without
// one, `tiny-go mcp login` signs in there with OpenID Connect).
type IdPConfig struct {
	Issuer       string `json:"issuer"`
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret,omitzero"`
	// IDToken is an ID token the user already holds (from a single
	// sign-on tool, usually through "${VAR}").
	IDToken string `json:"idToken,omitzero"`
}

var signingAlgorithms = []string{"RS256", "ES256"}

// Validate checks the combination of members.
func (c Config) Validate() error {
	switch c.Grant {
	case "", GrantAuthorizationCode:
		if c.PrivateKeyFile != "" {
			return errors.New(`"privateKeyFile" needs "grant": "client_credentials"`)
		}
	case GrantClientCredentials:
		if c.ClientID == "" {
			return errors.New(`"grant": "client_credentials" needs "clientId"`)
		}
		if (c.ClientSecret == "") == (c.PrivateKeyFile == "") {
			return errors.New(`"grant": "client_credentials" needs either "clientSecret" or "privateKeyFile"`)
		}
	case GrantEnterprise:
		if err := c.validateEnterprise(); err != nil {
			return err
		}
	default:
		return fmt.Errorf(`"grant" must be %q, %q or %q`, GrantAuthorizationCode, GrantClientCredentials, GrantEnterprise)
	}
	if c.IdP != nil && c.Grant != GrantEnterprise {
		return fmt.Errorf(`"idp" needs "grant": %q`, GrantEnterprise)
	}
	if c.ClientSecret != "" && c.ClientID == "" {
		return errors.New(`"clientSecret" needs "clientId"`)
	}
	if c.PrivateKeyFile != "" && !slices.Contains(signingAlgorithms, c.signingAlgorithm()) {
		return fmt.Errorf(`"signingAlgorithm" must be one of %q`, signingAlgorithms)
	}
	if c.CallbackPort < 0 || c.CallbackPort > 65535 {
		return errors.New(`"callbackPort" must be between 1 and 65535`)
	}
	return nil
}

func (c Config) signingAlgorithm() string {
	if c.SigningAlgorithm == "" {
		return "RS256"
	}
	return c.SigningAlgorithm
}

// validateEnterprise: the ID-JAG names the client registered at the
// server's authorization server, so that client must be configured, and
// so must the identity provider's issuer (https, or http on loopback) and
// tiny-go's client there.
func (c Config) validateEnterprise() error {
	switch {
	case c.ClientID == "":
		return errors.New(`"grant": "enterprise" needs "clientId" (tiny-go's client at the server's authorization server)`)
	case c.PrivateKeyFile != "":
		return errors.New(`"privateKeyFile" needs "grant": "client_credentials"`)
	case c.IdP == nil || c.IdP.Issuer == "" || c.IdP.ClientID == "":
		return errors.New(`"grant": "enterprise" needs "idp": {"issuer": ..., "clientId": ...}`)
	}
	u, err := url.Parse(c.IdP.Issuer)
	if err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && isLoopback(u.Hostname()))) {
		return errors.New(`"idp.issuer" must be an https URL (or http on loopback)`)
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
