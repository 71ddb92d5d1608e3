package oauth

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// registrationAS is an MCP server and its authorization server, whose
// metadata offers dynamic registration and client ID metadata documents
// as the test says; it records the client of the authorization request.
type registrationAS struct {
	srv        *httptest.Server
	dynamic    bool // a registration_endpoint
	cimd       bool // client_id_metadata_document_supported
	mu         sync.Mutex
	registered int
	clientID   string // of the authorization request
}

func newRegistrationAS(t *testing.T, dynamic, cimd bool) *registrationAS {
	a := &registrationAS{dynamic: dynamic, cimd: cimd}
	a.srv = httptest.NewServer(http.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *registrationAS) serve(w http.ResponseWriter, r *http.Request) {
	base := a.srv.URL
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/.well-known/oauth-protected-resource/mcp":
		fmt.Fprintf(w, `{"resource":%q,"authorization_servers":[%q]}`, base+"/mcp", base)
	case "/.well-known/oauth-authorization-server":
		reg := ""
		if a.dynamic {
			reg = fmt.Sprintf(`"registration_endpoint":%q,`, base+"/register")
		}
		fmt.Fprintf(w, `{"issuer":%q,"authorization_endpoint":%q,"token_endpoint":%q,%s"client_id_metadata_document_supported":%v,"code_challenge_methods_supported":["S256"],"token_endpoint_auth_methods_supported":["none","client_secret_basic"]}`,
			base, base+"/authorize", base+"/token", reg, a.cimd)
	case "/register":
		a.mu.Lock()
		a.registered++
		a.mu.Unlock()
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, `{"client_id":"dynamic-client","token_endpoint_auth_method":"none"}`)
	case "/authorize":
		q := r.URL.Query()
		a.mu.Lock()
		a.clientID = q.Get("client_id")
		a.mu.Unlock()
		back, _ := url.Parse(q.Get("redirect_uri"))
		back.RawQuery = url.Values{"code": {"c1"}, "state": {q.Get("state")}}.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	case "/token":
		fmt.Fprint(w, `{"access_token":"at","token_type":"Bearer","expires_in":3600}`)
	default:
		http.NotFound(w, r)
	}
}

// fetchingBrowser follows the authorization URL to the loopback redirect,
// as a browser whose user approves.
func fetchingBrowser(_ context.Context, u string) error {
	go func() {
		if resp, err := http.Get(u); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	return nil
}

// The client comes from issue #34's order: a client ID metadata document
// where the server supports one, else dynamic registration, else the
// configured client; not the SDK's (configured before dynamic) nor the
// spec's (configured first).
func TestRegistrationOrder(t *testing.T) {
	const doc = "https://tiny-go.example/client-metadata.json"
	for _, tt := range []struct {
		name          string
		dynamic, cimd bool
		cfg           Config
		want          string // client_id of the authorization request
		registers     int
	}{
		{"dynamic over the configured client", true, false, Config{ClientID: "configured", ClientSecret: "s"}, "dynamic-client", 1},
		{"configured without a registration endpoint", false, false, Config{ClientID: "configured", ClientSecret: "s"}, "configured", 0},
		{"metadata document first", true, true, Config{ClientID: "configured", ClientMetadataURL: doc}, doc, 0},
		{"no document configured: dynamic", true, true, Config{ClientID: "configured"}, "dynamic-client", 1},
		{"document unsupported: dynamic", true, false, Config{ClientMetadataURL: doc}, "dynamic-client", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := newRegistrationAS(t, tt.dynamic, tt.cimd)
			err := signInInteractive(t, a, tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			a.mu.Lock()
			defer a.mu.Unlock()
			if a.clientID != tt.want || a.registered != tt.registers {
				t.Errorf("client %q after %d registrations, want %q after %d", a.clientID, a.registered, tt.want, tt.registers)
			}
		})
	}
}

// An authorization server with no way to register and no configured
// client: one line naming the setting.
func TestRegistrationNoneOffered(t *testing.T) {
	a := newRegistrationAS(t, false, true)
	err := signInInteractive(t, a, Config{})
	if err == nil || err != errNoRegistration {
		t.Fatalf("err = %v", err)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.clientID != "" {
		t.Error("an authorization request was made")
	}
	if strings.Contains(err.Error(), "\n") {
		t.Error("more than one line")
	}
}

func signInInteractive(t *testing.T, a *registrationAS, cfg Config) error {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	h, err := NewHandler(Options{Alias: "docs", Server: a.srv.URL + "/mcp", Config: &cfg, Store: &Store{Dir: t.TempDir()},
		HTTP: a.srv.Client(), Interactive: true, Browser: fetchingBrowser})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", a.srv.URL+"/mcp", nil)
	resp := &http.Response{StatusCode: 401, Body: http.NoBody, Header: http.Header{
		"Www-Authenticate": {fmt.Sprintf(`Bearer resource_metadata=%q`, a.srv.URL+"/.well-known/oauth-protected-resource/mcp")},
	}}
	return h.Authorize(context.Background(), req, resp)
}
