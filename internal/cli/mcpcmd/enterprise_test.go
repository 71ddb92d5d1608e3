package mcpcmd

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// An enterprise sign-in that the identity provider refuses fails `mcp
// call` with one line saying what to do; the ID token (read from the
// variable .mcp.json names) is never shown.
func TestEnterpriseRefusalIsOneLine(t *testing.T) {
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/mcp":
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, srv.URL))
			w.WriteHeader(http.StatusUnauthorized)
		case "/.well-known/oauth-protected-resource/mcp":
			fmt.Fprintf(w, `{"resource":"%s/mcp","authorization_servers":["%s"]}`, srv.URL, srv.URL)
		case "/.well-known/oauth-authorization-server":
			fmt.Fprintf(w, `{"issuer":"%s","token_endpoint":"%s/token","code_challenge_methods_supported":["S256"]}`, srv.URL, srv.URL)
		case "/idp/.well-known/openid-configuration":
			fmt.Fprintf(w, `{"issuer":"%s/idp","token_endpoint":"%s/idp/token"}`, srv.URL, srv.URL)
		case "/idp/token":
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":"invalid_grant","error_description":"Audience validation failed"}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	payload := base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"u1","exp":4102444800}`))
	idToken := "eyJhbGciOiJFUzI1NiJ9." + payload + ".SECRET-SIGNATURE"

	c := newProject(t)
	c.env["XDG_CONFIG_HOME"] = filepath.Join(t.TempDir(), "config")
	c.env["IDP_ID_TOKEN"] = idToken
	c.write(".mcp.json", fmt.Sprintf(`{"mcpServers": {"wiki": {"type": "http", "url": "%s/mcp",
  "oauth": {"grant": "enterprise", "clientId": "tiny-go", "clientSecret": "s",
            "idp": {"issuer": "%s/idp", "clientId": "idp-client", "idToken": "${IDP_ID_TOKEN}"}}}}}`, srv.URL, srv.URL))
	code, _, stderr := c.mcp("call", "wiki")
	want := fmt.Sprintf(`MCP wiki: connecting: signing in: the identity provider refused the token exchange: invalid_grant (Audience validation failed): get a new ID token for "oauth.idp.idToken", or ask its administrator to let client "idp-client" use this server (%s/mcp)`, srv.URL)
	if code == 0 || !strings.Contains(stderr, want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Fatalf("exit %d, stderr\n%s\nwant the one line\n%s", code, stderr, want)
	}
	if strings.Contains(stderr, "SECRET-SIGNATURE") {
		t.Error("the ID token is shown")
	}
}
