package mcp

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/tiny-agent/tiny-go/internal/oauth"
)

// checkServerType validates .mcp.json's "type" against the other members.
func checkServerType(f serverFile) error {
	if f.Type == nil {
		return nil
	}
	switch *f.Type {
	case TransportStdio:
		if f.Command == nil {
			return errors.New(`"type": "stdio" needs "command"`)
		}
	case TransportHTTP, "streamable-http", "sse":
		if f.URL == nil {
			return fmt.Errorf(`"type": %q needs "url"`, *f.Type)
		}
	default:
		return fmt.Errorf(`"type" must be "stdio", "http" or "sse", not %q`, *f.Type)
	}
	return nil
}

// parseRemote validates the members of a server reached at a URL.
func parseRemote(s *Server, f serverFile) error {
	if f.Args != nil || f.PassEnv != nil || f.Env != nil {
		return errors.New(`"args", "env" and "passEnv" belong to a stdio server ("command")`)
	}
	endpoint, err := CanonicalEndpoint(*f.URL)
	if err != nil {
		return err
	}
	s.Endpoint = endpoint
	s.SSE = f.Type != nil && *f.Type == "sse"
	for name, value := range f.Headers {
		if !httpguts.ValidHeaderFieldName(name) {
			return fmt.Errorf(`"headers" has an invalid header name %q`, name)
		}
		if !httpguts.ValidHeaderFieldValue(value) {
			// Never echo the value: it may be a secret.
			return fmt.Errorf(`"headers" value of %s has control characters`, name)
		}
		if f.TokenEnv != nil && strings.EqualFold(name, "Authorization") {
			return errors.New(`"tokenEnv" and an "Authorization" header exclude each other`)
		}
	}
	if len(f.Headers) > 0 {
		s.Headers = make(map[string]string, len(f.Headers))
		for name, value := range f.Headers {
			s.Headers[http.CanonicalHeaderKey(name)] = value
		}
	}
	if f.OAuth != nil {
		if err := f.OAuth.Validate(); err != nil {
			return fmt.Errorf(`"oauth": %w`, err)
		}
		o := *f.OAuth
		o.Scopes = append([]string(nil), o.Scopes...)
		s.OAuth = &o
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}

// OAuthConfig is a server's "oauth" member.
type OAuthConfig = oauth.Config
