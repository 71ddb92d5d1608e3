package oauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-json-experiment/json"
)

// idpTokenEndpoint finds the identity provider's token endpoint in its
// OpenID Connect discovery document, else its RFC 8414 metadata. The
// SDK's lookup is not used: it refuses a server that lists no PKCE
// method, which a token exchange does not need.
func idpTokenEndpoint(ctx context.Context, issuer string, client *http.Client) (string, error) {
	u, err := url.Parse(issuer)
	if err != nil {
		return "", err
	}
	path := strings.TrimRight(u.Path, "/")
	origin := u.Scheme + "://" + u.Host
	var last error
	for _, m := range []string{
		origin + path + "/.well-known/openid-configuration",
		origin + "/.well-known/oauth-authorization-server" + path,
	} {
		endpoint, err := fetchIdPMetadata(ctx, m, issuer, client)
		if err == nil {
			return endpoint, nil
		}
		last = err
	}
	return "", fmt.Errorf(`the identity provider %s publishes no usable metadata (%v): check "oauth.idp.issuer"`, issuer, last)
}

func fetchIdPMetadata(ctx context.Context, metadataURL, issuer string, client *http.Client) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metadataURL, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: HTTP %d", metadataURL, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return "", err
	}
	return parseIdPMetadata(body, issuer)
}

// parseIdPMetadata is the token endpoint of a metadata document, which
// must speak for issuer (RFC 8414 §3.3) and name an https endpoint (or
// http on loopback).
func parseIdPMetadata(body []byte, issuer string) (string, error) {
	var meta struct {
		Issuer        string `json:"issuer"`
		TokenEndpoint string `json:"token_endpoint"`
	}
	if err := json.Unmarshal(body, &meta, json.RejectUnknownMembers(false)); err != nil {
		return "", errors.New("the metadata is not a JSON object")
	}
	if strings.TrimRight(meta.Issuer, "/") != strings.TrimRight(issuer, "/") {
		return "", fmt.Errorf("the metadata speaks for issuer %q", meta.Issuer)
	}
	u, err := url.Parse(meta.TokenEndpoint)
	if err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && isLoopback(u.Hostname()))) {
		return "", errors.New("the metadata names no https token_endpoint")
	}
	return meta.TokenEndpoint, nil
}
