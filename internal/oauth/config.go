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
	"slices"
)

// Grants a server's "oauth" config may name.
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
)

// Config is the "oauth" member of an MCP server's configuration.
type Config struct {
	// Grant is GrantAuthorizationCode (the default: a person signs in
	// with `tiny-go mcp login`) or GrantClientCredentials (a machine).
	Grant string `json:"grant,omitzero"`
	// ClientID and ClientSecret are a pre-registered client; without them
	// the client registers itself (a client ID metadata document when
	// ClientMetadataURL is set and the server supports it, else dynamic
	// registration).
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
	default:
		return fmt.Errorf(`"grant" must be %q or %q`, GrantAuthorizationCode, GrantClientCredentials)
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
