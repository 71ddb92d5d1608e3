package oauth

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"
)

// enterpriseWorld is an MCP server (its protected-resource metadata),
// its authorization server and an enterprise IdP, each recording the
// token requests it got and answering what the test sets.
type enterpriseWorld struct {
	mcp, as, idp *httptest.Server

	mu                    sync.Mutex
	exchanges, bearers    []url.Values
	bearerAuth            []string
	idpRefuses, asRefuses string // an OAuth error JSON body, "" to grant
}

func newEnterpriseWorld(t *testing.T) *enterpriseWorld {
	w := &enterpriseWorld{}
	w.as = httptest.NewServer(http.HandlerFunc(w.serveAS))
	w.idp = httptest.NewServer(http.HandlerFunc(w.serveIdP))
	w.mcp = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/oauth-protected-resource/mcp" {
			http.NotFound(rw, r)
			return
		}
		rw.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(rw, `{"resource":%q,"authorization_servers":[%q]}`, w.mcp.URL+"/mcp", w.as.URL)
	}))
	t.Cleanup(func() { w.mcp.Close(); w.as.Close(); w.idp.Close() })
	return w
}

func (w *enterpriseWorld) serveAS(rw http.ResponseWriter, r *http.Request) {
	rw.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/.well-known/oauth-authorization-server":
		// No PKCE method: a server that takes only ID-JAGs need not list one.
		fmt.Fprintf(rw, `{"issuer":%q,"token_endpoint":%q,"grant_types_supported":[%q],"token_endpoint_auth_methods_supported":["client_secret_basic"]}`,
			w.as.URL, w.as.URL+"/token", grantJWTBearer)
	case "/token":
		r.ParseForm()
		w.mu.Lock()
		w.bearers = append(w.bearers, r.PostForm)
		w.bearerAuth = append(w.bearerAuth, r.Header.Get("Authorization"))
		refuse := w.asRefuses
		w.mu.Unlock()
		if refuse != "" {
			rw.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(rw, refuse)
			return
		}
		fmt.Fprint(rw, `{"access_token":"at-1","token_type":"Bearer","expires_in":3600}`)
	default:
		http.NotFound(rw, r)
	}
}

func (w *enterpriseWorld) serveIdP(rw http.ResponseWriter, r *http.Request) {
	rw.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/.well-known/openid-configuration":
		fmt.Fprintf(rw, `{"issuer":%q,"authorization_endpoint":%q,"token_endpoint":%q,"code_challenge_methods_supported":["S256"]}`, w.idp.URL, w.idp.URL+"/authorize", w.idp.URL+"/token")
	case "/authorize": // the user signs in at once
		q := r.URL.Query()
		back, _ := url.Parse(q.Get("redirect_uri"))
		back.RawQuery = url.Values{"code": {"idp-code"}, "state": {q.Get("state")}}.Encode()
		http.Redirect(rw, r, back.String(), http.StatusFound)
	case "/token":
		r.ParseForm()
		if r.PostForm.Get("grant_type") == "authorization_code" && r.PostForm.Get("code") == "idp-code" && r.PostForm.Get("code_verifier") != "" {
			fmt.Fprintf(rw, `{"access_token":"idp-at","token_type":"Bearer","id_token":%q}`, fakeJWT(`{"sub":"from-browser"}`))
			return
		}
		w.mu.Lock()
		w.exchanges = append(w.exchanges, r.PostForm)
		refuse := w.idpRefuses
		w.mu.Unlock()
		if refuse != "" {
			rw.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(rw, refuse)
			return
		}
		fmt.Fprint(rw, `{"access_token":"the-id-jag","issued_token_type":"urn:ietf:params:oauth:token-type:id-jag","token_type":"N_A"}`)
	default:
		http.NotFound(rw, r)
	}
}

// fakeJWT is an unsigned compact JWT with claims (the client never checks
// an ID token's signature: the IdP does).
func fakeJWT(claims string) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(`{"alg":"ES256"}`)) + "." + enc.EncodeToString([]byte(claims)) + ".c2ln"
}

// signIn runs the handler after the server's 401, as the SDK does.
func (w *enterpriseWorld) signIn(t *testing.T, h *Handler) error {
	t.Helper()
	req, _ := http.NewRequest("POST", w.mcp.URL+"/mcp", nil)
	resp := &http.Response{StatusCode: 401, Body: http.NoBody, Header: http.Header{
		"Www-Authenticate": {fmt.Sprintf(`Bearer resource_metadata=%q`, w.mcp.URL+"/.well-known/oauth-protected-resource/mcp")},
	}}
	return h.Authorize(context.Background(), req, resp)
}

func (w *enterpriseWorld) handler(t *testing.T, idToken string, store *Store, browser ...Browser) *Handler {
	t.Helper()
	cfg := &Config{Grant: GrantEnterprise, ClientID: "mcp-client", ClientSecret: "mcp-secret",
		IdP: &IdPConfig{Issuer: w.idp.URL, ClientID: "idp-client", IDToken: idToken}}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	opts := Options{Alias: "docs", Server: w.mcp.URL + "/mcp", Config: cfg, Store: store, HTTP: w.as.Client()}
	if len(browser) > 0 {
		opts.Interactive, opts.Browser = true, browser[0]
	}
	h, err := NewHandler(opts)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// A run with a configured ID token signs in without a browser: the ID
// token is exchanged at the IdP for an ID-JAG naming the server's
// authorization server and the server, which the authorization server
// takes as a JWT bearer grant from the configured client; the token is
// stored for the next run.
func TestEnterpriseSignIn(t *testing.T) {
	w := newEnterpriseWorld(t)
	idToken := fakeJWT(fmt.Sprintf(`{"sub":"u1","aud":"idp-client","exp":%d}`, time.Now().Add(time.Hour).Unix()))
	store := &Store{Dir: t.TempDir()}
	h := w.handler(t, idToken, store)
	if err := w.signIn(t, h); err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.exchanges) != 1 || len(w.bearers) != 1 {
		t.Fatalf("%d exchanges, %d bearer grants", len(w.exchanges), len(w.bearers))
	}
	want := map[string]string{
		"grant_type":           "urn:ietf:params:oauth:grant-type:token-exchange",
		"requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
		"subject_token":        idToken,
		"subject_token_type":   "urn:ietf:params:oauth:token-type:id_token",
		"audience":             w.as.URL,
		"resource":             w.mcp.URL + "/mcp",
		"client_id":            "idp-client",
	}
	for k, v := range want {
		if got := w.exchanges[0].Get(k); got != v {
			t.Errorf("token exchange %s = %q, want %q", k, got, v)
		}
	}
	b := w.bearers[0]
	if b.Get("grant_type") != grantJWTBearer || b.Get("assertion") != "the-id-jag" || b.Has("code") || b.Get("resource") != w.mcp.URL+"/mcp" {
		t.Errorf("JWT bearer grant %v", b)
	}
	if basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("mcp-client:mcp-secret")); w.bearerAuth[0] != basic {
		t.Errorf("client authentication %q, want client_secret_basic", w.bearerAuth[0])
	}
	ts, err := h.TokenSource(context.Background())
	if err != nil || ts == nil {
		t.Fatalf("token source %v, %v", ts, err)
	}
	if tok, err := ts.Token(); err != nil || tok.AccessToken != "at-1" {
		t.Fatalf("token %+v, %v", tok, err)
	}
	// The next run starts with the stored token.
	if r, _ := store.Load(w.mcp.URL + "/mcp"); r == nil || r.AccessToken != "at-1" || r.ClientID != "mcp-client" {
		t.Fatalf("stored %+v", r)
	}
	next := w.handler(t, idToken, store)
	if ts, _ := next.TokenSource(context.Background()); ts == nil {
		t.Fatal("the next run has no token")
	} else if tok, _ := ts.Token(); tok.AccessToken != "at-1" {
		t.Fatalf("the next run's token %q", tok.AccessToken)
	}
}

// Each refusal is one line saying what to do, and keeps the OAuth error.
func TestEnterpriseRefusals(t *testing.T) {
	future := time.Now().Add(time.Hour).Unix()
	for _, tt := range []struct {
		name, idpRefuses, asRefuses string
		idToken                     string
		want                        string // %s: the MCP server's resource
		contacts                    int    // requests to the IdP's token endpoint
	}{
		{
			name:       "IdP refuses",
			idpRefuses: `{"error":"invalid_grant","error_description":"Audience validation failed"}`,
			want:       `the identity provider refused the token exchange: invalid_grant (Audience validation failed): get a new ID token for "oauth.idp.idToken", or ask its administrator to let client "idp-client" use this server (%s)`,
			contacts:   1,
		},
		{
			name:      "AS refuses the client",
			asRefuses: `{"error":"invalid_client","error_description":"Invalid client credentials"}`,
			want:      `the authorization server refused the ID-JAG: invalid_client (Invalid client credentials): check "oauth.clientId" ("mcp-client") and "oauth.clientSecret": they must be tiny-go's client registered at the server's authorization server`,
			contacts:  1,
		},
		{
			name:      "AS refuses the grant",
			asRefuses: `{"error":"invalid_grant"}`,
			want:      `the authorization server refused the ID-JAG: invalid_grant: ask the server's administrator to accept ID-JAGs from IDP for client "mcp-client"`,
			contacts:  1,
		},
		{
			name:    "expired ID token",
			idToken: fakeJWT(`{"sub":"u1","exp":1000000000}`),
			want:    `the ID token in "oauth.idp.idToken" expired at 2001-09-09T01:46:40Z: get a new one from your identity provider`,
		},
		{
			name:    "not an ID token",
			idToken: "opaque-token",
			want:    `"oauth.idp.idToken" is not an ID token (not a JWT: it has no three dot-separated parts): set it to the identity provider's ID token (a JWT)`,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newEnterpriseWorld(t)
			w.idpRefuses, w.asRefuses = tt.idpRefuses, tt.asRefuses
			idToken := tt.idToken
			if idToken == "" {
				idToken = fakeJWT(fmt.Sprintf(`{"sub":"u1","exp":%d}`, future))
			}
			err := w.signIn(t, w.handler(t, idToken, &Store{Dir: t.TempDir()}))
			want := strings.ReplaceAll(fmt.Sprintf(tt.want, w.mcp.URL+"/mcp"), "IDP", w.idp.URL)
			if !strings.Contains(tt.want, "%s") {
				want = strings.ReplaceAll(tt.want, "IDP", w.idp.URL)
			}
			if err == nil || err.Error() != want {
				t.Fatalf("error\n %v\nwant\n %s", err, want)
			}
			w.mu.Lock()
			defer w.mu.Unlock()
			var re *oauth2.RetrieveError
			if (tt.idpRefuses != "" || tt.asRefuses != "") && !errors.As(err, &re) {
				t.Error("the OAuth error response is lost")
			}
			if len(w.exchanges) != tt.contacts {
				t.Errorf("%d token exchanges, want %d", len(w.exchanges), tt.contacts)
			}
		})
	}
}

// Without a configured ID token a run cannot sign in at the IdP (that
// takes a browser): it names the command that can.
func TestEnterpriseRunNeedsLogin(t *testing.T) {
	w := newEnterpriseWorld(t)
	err := w.signIn(t, w.handler(t, "", &Store{Dir: t.TempDir()}))
	if err == nil || err.Error() != "sign-in needed: run `tiny-go mcp login docs`" {
		t.Fatalf("err = %v", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.exchanges) != 0 {
		t.Error("the IdP was asked without an ID token")
	}
}

// A stored token that expired with no refresh token is not sent: the
// server's 401 then runs a new exchange with the configured ID token.
func TestEnterpriseExpiredTokenSignsInAgain(t *testing.T) {
	w := newEnterpriseWorld(t)
	store := &Store{Dir: t.TempDir()}
	old := &Record{Server: w.mcp.URL + "/mcp", ClientID: "mcp-client", TokenURL: w.as.URL + "/token", AccessToken: "old", Expiry: time.Now().Add(-time.Minute)}
	if err := store.Save(old); err != nil {
		t.Fatal(err)
	}
	h := w.handler(t, fakeJWT(`{"sub":"u1"}`), store)
	if ts, err := h.TokenSource(context.Background()); ts != nil || err != nil {
		t.Fatalf("an expired token is offered: %v %v", ts, err)
	}
	if err := w.signIn(t, h); err != nil {
		t.Fatal(err)
	}
	ts, _ := h.TokenSource(context.Background())
	if tok, err := ts.Token(); err != nil || tok.AccessToken != "at-1" {
		t.Fatalf("token %+v, %v", tok, err)
	}
}

// Without a configured ID token, `tiny-go mcp login` gets one by signing
// in at the IdP in the browser (OpenID Connect), then exchanges it.
func TestEnterpriseBrowserSignIn(t *testing.T) {
	w := newEnterpriseWorld(t)
	store := &Store{Dir: t.TempDir()}
	if err := w.signIn(t, w.handler(t, "", store, fetchingBrowser)); err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.exchanges) != 1 || w.exchanges[0].Get("subject_token") != fakeJWT(`{"sub":"from-browser"}`) {
		t.Fatalf("token exchanges %v", w.exchanges)
	}
	if r, _ := store.Load(w.mcp.URL + "/mcp"); r == nil || r.AccessToken != "at-1" {
		t.Fatalf("stored %+v", r)
	}
}

func TestEnterpriseConfigValidate(t *testing.T) {
	idp := &IdPConfig{Issuer: "https://idp.example", ClientID: "c"}
	for _, c := range []Config{
		{Grant: GrantEnterprise, IdP: idp},
		{Grant: GrantEnterprise, ClientID: "c"},
		{Grant: GrantEnterprise, ClientID: "c", IdP: &IdPConfig{Issuer: "https://idp.example"}},
		{Grant: GrantEnterprise, ClientID: "c", IdP: &IdPConfig{Issuer: "http://idp.example", ClientID: "c"}},
		{Grant: GrantEnterprise, ClientID: "c", IdP: idp, PrivateKeyFile: "k"},
		{ClientID: "c", IdP: idp},
	} {
		if c.Validate() == nil {
			t.Errorf("%+v validated", c)
		}
	}
	for _, c := range []Config{
		{Grant: GrantEnterprise, ClientID: "c", IdP: idp},
		{Grant: GrantEnterprise, ClientID: "c", ClientSecret: "s", IdP: &IdPConfig{Issuer: "http://127.0.0.1:8080/tenant", ClientID: "c", IDToken: "x.y.z"}},
	} {
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

func TestIDTokenExpiry(t *testing.T) {
	exp, err := idTokenExpiry(fakeJWT(`{"exp":1700000000}`))
	if err != nil || !exp.Equal(time.Unix(1700000000, 0)) {
		t.Errorf("exp %v, %v", exp, err)
	}
	if exp, err := idTokenExpiry(fakeJWT(`{"sub":"u"}`)); err != nil || !exp.IsZero() {
		t.Errorf("no exp: %v, %v", exp, err)
	}
	for _, bad := range []string{"", "a.b", "a.!!.c", fakeJWT(`[1]`), fakeJWT(`{"exp":"soon"}`), fakeJWT(`{"exp":-1}`)} {
		if _, err := idTokenExpiry(bad); err == nil {
			t.Errorf("%q read", bad)
		}
	}
}

func FuzzIDTokenExpiry(f *testing.F) {
	f.Add(fakeJWT(`{"exp":1700000000}`))
	f.Add(fakeJWT(`{"exp":1e300}`))
	f.Add("a..c")
	f.Fuzz(func(t *testing.T, token string) {
		exp, err := idTokenExpiry(token)
		if err == nil && !exp.IsZero() && (exp.Unix() < 0 || strings.Count(token, ".") != 2) {
			t.Fatalf("%q read as %v", token, exp)
		}
	})
}

func TestParseTokenMeta(t *testing.T) {
	for body, want := range map[string]string{
		`{"issuer":"https://idp.example","token_endpoint":"https://idp.example/token"}`:                                                 "https://idp.example/token",
		`{"issuer":"https://idp.example/","token_endpoint":"https://idp.example/token"}`:                                                "https://idp.example/token",
		`{"issuer":"https://evil.example","token_endpoint":"https://idp.example/token"}`:                                                "",
		`{"issuer":"https://idp.example","token_endpoint":"http://idp.example/token"}`:                                                  "",
		`{"issuer":"https://idp.example","token_endpoint":"javascript:x"}`:                                                              "",
		`{"issuer":"https://idp.example"}`:                                                                                              "",
		`{"issuer":"https://idp.example","token_endpoint":"https://idp.example/token","token_endpoint_auth_methods_supported":"basic"}`: "",
		`not json`: "",
	} {
		meta, err := parseTokenMeta([]byte(body), "https://idp.example")
		got := ""
		if meta != nil {
			got = meta.TokenEndpoint
		}
		if got != want || (want == "") != (err != nil) {
			t.Errorf("%s: %q, %v", body, got, err)
		}
	}
}

func FuzzParseTokenMeta(f *testing.F) {
	f.Add([]byte(`{"issuer":"https://idp.example","token_endpoint":"https://idp.example/token"}`))
	f.Add([]byte(`{"issuer":"https://idp.example","token_endpoint":"http://[::1]:1/t","token_endpoint_auth_methods_supported":["client_secret_post"]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		meta, err := parseTokenMeta(body, "https://idp.example")
		if err != nil {
			if meta != nil {
				t.Fatal("metadata with an error")
			}
			return
		}
		u, perr := url.Parse(meta.TokenEndpoint)
		if perr != nil || (u.Scheme != "https" && !(u.Scheme == "http" && isLoopback(u.Hostname()))) {
			t.Fatalf("%s gave endpoint %q", body, meta.TokenEndpoint)
		}
	})
}
