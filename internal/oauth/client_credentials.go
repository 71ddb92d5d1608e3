package oauth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// newClientCredentials is machine sign-in: the SDK's handler for a client
// secret, tiny-go's for a signed JWT assertion (private_key_jwt, RFC 7523).
func newClientCredentials(cfg Config, client *http.Client) (auth.OAuthHandler, error) {
	if cfg.PrivateKeyFile == "" {
		return extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
			Credentials: &oauthex.ClientCredentials{ClientID: cfg.ClientID, ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: cfg.ClientSecret}},
			HTTPClient:  client,
		})
	}
	key, err := readPrivateKey(cfg.PrivateKeyFile, cfg.signingAlgorithm())
	if err != nil {
		return nil, err
	}
	return &jwtHandler{cfg: cfg, key: key, client: client}, nil
}

// readPrivateKey reads a PEM (PKCS #8, or PKCS #1 / SEC 1) key that fits alg.
func readPrivateKey(path, alg string) (crypto.Signer, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("privateKeyFile: %w", err)
	}
	return parsePrivateKey(data, alg)
}

func parsePrivateKey(data []byte, alg string) (crypto.Signer, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("privateKeyFile: no PEM block")
	}
	var key any
	var err error
	switch block.Type {
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("privateKeyFile: %w", err)
	}
	switch k := key.(type) {
	case *rsa.PrivateKey:
		if alg == "RS256" {
			return k, nil
		}
	case *ecdsa.PrivateKey:
		if alg == "ES256" && k.Curve.Params().BitSize == 256 {
			return k, nil
		}
	}
	return nil, fmt.Errorf("privateKeyFile: the key does not fit signingAlgorithm %s", alg)
}

// signJWT makes a compact JWS of claims with key (RS256 or ES256).
func signJWT(key crypto.Signer, alg string, claims any) (string, error) {
	header, err := json.Marshal(map[string]string{"alg": alg, "typ": "JWT"})
	if err != nil {
		return "", err
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	input := enc.EncodeToString(header) + "." + enc.EncodeToString(payload)
	sum := sha256.Sum256([]byte(input))
	var sig []byte
	switch k := key.(type) {
	case *rsa.PrivateKey:
		sig, err = rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, sum[:])
	case *ecdsa.PrivateKey:
		var r, s *big.Int
		r, s, err = ecdsa.Sign(rand.Reader, k, sum[:])
		if err == nil {
			// JWS wants r and s as two fixed 32-byte halves, not ASN.1.
			sig = make([]byte, 64)
			r.FillBytes(sig[:32])
			s.FillBytes(sig[32:])
		}
	default:
		err = errors.New("unsupported key type")
	}
	if err != nil {
		return "", err
	}
	return input + "." + enc.EncodeToString(sig), nil
}

// jwtHandler is the client credentials grant authenticated by a signed
// assertion: discovery as for a person's sign-in, then a token request
// with a fresh assertion each time.
type jwtHandler struct {
	cfg    Config
	key    crypto.Signer
	client *http.Client

	mu sync.Mutex
	ts oauth2.TokenSource
}

func (h *jwtHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ts, nil
}

func (h *jwtHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	defer io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	cs, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	prm, err := discoverResource(ctx, cs, req.URL.String(), h.client)
	if err != nil {
		return err
	}
	asm, err := auth.GetAuthServerMetadata(ctx, prm.AuthorizationServers[0], h.client)
	if err != nil {
		return fmt.Errorf("authorization server metadata: %w", err)
	}
	if asm == nil {
		asm = &oauthex.AuthServerMeta{Issuer: prm.AuthorizationServers[0], TokenEndpoint: strings.TrimRight(prm.AuthorizationServers[0], "/") + "/token"}
	}
	scopes := challengeScopes(cs)
	if len(scopes) == 0 {
		scopes = prm.ScopesSupported
	}
	if len(h.cfg.Scopes) > 0 {
		scopes = h.cfg.Scopes
	}
	src := &assertionSource{h: h, tokenURL: asm.TokenEndpoint, audience: asm.Issuer, scopes: scopes, resource: prm.Resource}
	ts := oauth2.ReuseTokenSource(nil, src)
	if _, err := ts.Token(); err != nil {
		return fmt.Errorf("client credentials token request: %w", err)
	}
	h.mu.Lock()
	h.ts = ts
	h.mu.Unlock()
	return nil
}

// assertionSource requests a token with a newly signed assertion.
type assertionSource struct {
	h                            *jwtHandler
	tokenURL, audience, resource string
	scopes                       []string
}

func (s *assertionSource) Token() (*oauth2.Token, error) {
	now := time.Now()
	assertion, err := signJWT(s.h.key, s.h.cfg.signingAlgorithm(), map[string]any{
		"iss": s.h.cfg.ClientID, "sub": s.h.cfg.ClientID, "aud": s.audience,
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(), "jti": rand.Text(),
	})
	if err != nil {
		return nil, err
	}
	params := url.Values{
		"client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"},
		"client_assertion":      {assertion},
	}
	if s.resource != "" {
		params.Set("resource", s.resource)
	}
	cc := clientcredentials.Config{ClientID: s.h.cfg.ClientID, TokenURL: s.tokenURL, Scopes: s.scopes, EndpointParams: params, AuthStyle: oauth2.AuthStyleInParams}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, s.h.client)
	return cc.Token(ctx)
}

// discoverResource finds the protected resource metadata: the challenge's
// resource_metadata, then the path-based well-known location, then the
// root one; a server without any is its own authorization server
// (2025-03-26).
func discoverResource(ctx context.Context, cs []oauthex.Challenge, server string, client *http.Client) (*oauthex.ProtectedResourceMetadata, error) {
	u, err := url.Parse(server)
	if err != nil {
		return nil, err
	}
	var candidates []string
	for _, c := range cs {
		if m := c.Params["resource_metadata"]; m != "" {
			candidates = append(candidates, m)
		}
	}
	path := *u
	path.Path, path.RawQuery = "/.well-known/oauth-protected-resource/"+strings.TrimLeft(u.Path, "/"), ""
	root := path
	root.Path = "/.well-known/oauth-protected-resource"
	candidates = append(candidates, path.String(), root.String())
	for i, c := range candidates {
		resource := server
		if i == len(candidates)-1 {
			r := *u
			r.Path, r.RawQuery = "", ""
			resource = r.String()
		}
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, c, resource, client)
		if err == nil && prm != nil && len(prm.AuthorizationServers) > 0 {
			return prm, nil
		}
	}
	origin := *u
	origin.Path, origin.RawQuery = "", ""
	return &oauthex.ProtectedResourceMetadata{Resource: server, AuthorizationServers: []string{origin.String()}}, nil
}

// challengeScopes are the scopes a Bearer challenge asks for.
func challengeScopes(cs []oauthex.Challenge) []string {
	for _, c := range cs {
		if c.Scheme == "bearer" && c.Params["scope"] != "" {
			return strings.Fields(c.Params["scope"])
		}
	}
	return nil
}
