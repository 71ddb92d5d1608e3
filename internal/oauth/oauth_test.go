package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
)

func TestStoreKeepsTokensPrivate(t *testing.T) {
	s := &Store{Dir: filepath.Join(t.TempDir(), "mcp-oauth")}
	r := &Record{Server: "https://mcp.example.com/mcp", ClientID: "c", TokenURL: "https://as/token", AccessToken: "at-secret", RefreshToken: "rt", Expiry: time.Now().Add(time.Hour).Round(time.Second)}
	if err := s.Save(r); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(s.Path(r.Server))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v, %v", fi.Mode(), err)
	}
	if di, _ := os.Stat(s.Dir); di.Mode().Perm() != 0o700 {
		t.Errorf("store dir mode %v", di.Mode())
	}
	got, err := s.Load(r.Server)
	if err != nil || got.AccessToken != "at-secret" || got.RefreshToken != "rt" || !got.Expiry.Equal(r.Expiry) {
		t.Fatalf("load: %+v %v", got, err)
	}
	if other, _ := s.Load("https://other.example.com/mcp"); other != nil {
		t.Error("another server's record")
	}
	if found, _ := s.Delete(r.Server); !found {
		t.Error("delete found nothing")
	}
	if found, _ := s.Delete(r.Server); found {
		t.Error("deleted twice")
	}
}

// A run (not interactive) never opens the browser on a 401: it fails with
// the one-line hint naming the command.
func TestRunNeedsLogin(t *testing.T) {
	h, err := NewHandler(Options{Alias: "docs", Server: "https://h/mcp", Store: &Store{Dir: t.TempDir()}, Browser: func(context.Context, string) error {
		t.Error("the browser was opened")
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	resp := &http.Response{StatusCode: 401, Header: http.Header{"Www-Authenticate": {`Bearer resource_metadata="https://h/.well-known/oauth-protected-resource/mcp"`}}, Body: http.NoBody}
	req, _ := http.NewRequest("POST", "https://h/mcp", nil)
	err = h.Authorize(context.Background(), req, resp)
	if err == nil || err.Error() != "sign-in needed: run `tiny-go mcp login docs`" {
		t.Fatalf("err = %v", err)
	}
}

func TestInsufficientScope(t *testing.T) {
	for h, want := range map[string]bool{
		`Bearer error="insufficient_scope", scope="a b"`: true,
		`Bearer error="invalid_token"`:                   false,
		`Basic realm="x"`:                                false,
		``:                                               false,
	} {
		if got := InsufficientScope(http.Header{"Www-Authenticate": {h}}); got != want {
			t.Errorf("%q: %v", h, got)
		}
	}
}

func FuzzInsufficientScope(f *testing.F) {
	f.Add(`Bearer error="insufficient_scope", scope="a b", resource_metadata="https://x"`)
	f.Add(`Bearer realm="x", error=insufficient_scope`)
	f.Add(`Basic, Bearer error="insufficient_scope"`)
	f.Fuzz(func(t *testing.T, h string) {
		got := InsufficientScope(http.Header{"Www-Authenticate": {h}})
		if got && !strings.Contains(strings.ToLower(h), "insufficient_scope") {
			t.Fatalf("%q read as insufficient_scope", h)
		}
	})
}

// The client assertion verifies with the public key and carries the
// claims the token endpoint checks (RFC 7523).
func TestSignJWTES256(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(key)
	signer, err := parsePrivateKey(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), "ES256")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parsePrivateKey(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), "RS256"); err == nil {
		t.Error("an EC key was taken for RS256")
	}
	tok, err := signJWT(signer, "ES256", map[string]any{"iss": "c", "sub": "c", "aud": "https://as"})
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("%q", tok)
	}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if len(sig) != 64 || !ecdsa.Verify(&key.PublicKey, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Fatal("the signature does not verify")
	}
	payload, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims map[string]string
	if err := json.Unmarshal(payload, &claims); err != nil || claims["iss"] != "c" || claims["aud"] != "https://as" {
		t.Errorf("claims %s: %v", payload, err)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []Config{
		{Grant: "password"},
		{Grant: GrantClientCredentials},
		{Grant: GrantClientCredentials, ClientID: "c"},
		{Grant: GrantClientCredentials, ClientID: "c", ClientSecret: "s", PrivateKeyFile: "k"},
		{ClientSecret: "s"},
		{PrivateKeyFile: "k"},
		{Grant: GrantClientCredentials, ClientID: "c", PrivateKeyFile: "k", SigningAlgorithm: "HS256"},
	} {
		if c.Validate() == nil {
			t.Errorf("%+v validated", c)
		}
	}
	for _, c := range []Config{{}, {ClientID: "c"}, {Grant: GrantClientCredentials, ClientID: "c", ClientSecret: "s"}, {Grant: GrantClientCredentials, ClientID: "c", PrivateKeyFile: "k", SigningAlgorithm: "ES256"}} {
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

// A 2025-03-26 server's metadata may name an issuer on a path of its own
// origin: read as the origin once the server has no protected-resource
// metadata; an issuer elsewhere, or a server with that metadata, is left
// for the SDK's check.
func TestLegacyIssuer(t *testing.T) {
	var prm int
	var issuer string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/.well-known/oauth-protected-resource/mcp":
			w.WriteHeader(prm)
		case "/.well-known/oauth-authorization-server":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"issuer":%q,"token_endpoint":"x"}`, issuer)
		}
	}))
	defer srv.Close()
	for _, tt := range []struct {
		prm          int
		issuer, want string
	}{
		{404, srv.URL + "/oauth", srv.URL},
		{404, "https://elsewhere.example/oauth", "https://elsewhere.example/oauth"},
		{200, srv.URL + "/oauth", srv.URL + "/oauth"},
	} {
		prm, issuer = tt.prm, tt.issuer
		c := newLegacyIssuer(srv.Client(), srv.URL+"/mcp")
		if r, err := c.Get(srv.URL + "/.well-known/oauth-protected-resource/mcp"); err == nil {
			r.Body.Close()
		}
		r, err := c.Get(srv.URL + "/.well-known/oauth-authorization-server")
		if err != nil {
			t.Fatal(err)
		}
		var meta struct{ Issuer string }
		err = json.UnmarshalRead(r.Body, &meta, json.MatchCaseInsensitiveNames(true))
		r.Body.Close()
		if err != nil || meta.Issuer != tt.want {
			t.Errorf("prm %d, issuer %s: read %q, want %q (%v)", tt.prm, tt.issuer, meta.Issuer, tt.want, err)
		}
	}
}
