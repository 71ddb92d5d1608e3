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

// tokenMeta is what a token request needs from a server's metadata.
type tokenMeta struct {
	Issuer        string   `json:"issuer"`
	TokenEndpoint string   `json:"token_endpoint"`
	AuthMethods   []string `json:"token_endpoint_auth_methods_supported"`
}

// findTokenMeta reads issuer's metadata: its OpenID Connect discovery
// document and its RFC 8414 metadata, the one oidcFirst says first. The
// SDK's lookup is not used here: it refuses a server that lists no PKCE
// method, which neither a token exchange nor a JWT bearer grant needs.
// Nil without either document (both answer 4xx).
func findTokenMeta(ctx context.Context, issuer string, client *http.Client, oidcFirst bool) (*tokenMeta, error) {
	u, err := url.Parse(issuer)
	if err != nil {
		return nil, err
	}
	path := strings.TrimRight(u.Path, "/")
	origin := u.Scheme + "://" + u.Host
	urls := []string{origin + "/.well-known/oauth-authorization-server" + path, origin + path + "/.well-known/openid-configuration"}
	if oidcFirst {
		urls[0], urls[1] = urls[1], urls[0]
	}
	for _, m := range urls {
		meta, status, err := fetchTokenMeta(ctx, m, issuer, client)
		if status >= 400 && status < 500 {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m, err)
		}
		return meta, nil
	}
	return nil, nil
}

func fetchTokenMeta(ctx context.Context, metadataURL, issuer string, client *http.Client) (*tokenMeta, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metadataURL, nil)
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, resp.StatusCode, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, resp.StatusCode, err
	}
	meta, err := parseTokenMeta(body, issuer)
	return meta, resp.StatusCode, err
}

// parseTokenMeta reads a metadata document, which must speak for issuer
// (RFC 8414 §3.3) and name an https token endpoint (or http on loopback).
func parseTokenMeta(body []byte, issuer string) (*tokenMeta, error) {
	var meta tokenMeta
	if err := json.Unmarshal(body, &meta); err != nil {
		return nil, errors.New("the metadata is not a JSON object of the expected members")
	}
	if strings.TrimRight(meta.Issuer, "/") != strings.TrimRight(issuer, "/") {
		return nil, fmt.Errorf("the metadata speaks for issuer %q", oneLine(meta.Issuer))
	}
	u, err := url.Parse(meta.TokenEndpoint)
	if err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && isLoopback(u.Hostname()))) {
		return nil, errors.New("the metadata names no https token_endpoint")
	}
	return &meta, nil
}
