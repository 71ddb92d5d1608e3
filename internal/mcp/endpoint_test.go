package mcp

import (
	"strings"
	"testing"
)

func TestCanonicalEndpoint(t *testing.T) {
	good := map[string]string{
		"https://example.com/mcp":               "https://example.com/mcp",
		"HTTPS://Example.COM/MCP":               "https://example.com/MCP",
		"https://example.com:443/mcp":           "https://example.com/mcp",
		"https://example.com:8443/mcp":          "https://example.com:8443/mcp",
		"https://example.com:0443/":             "https://example.com/",
		"https://example.com":                   "https://example.com",
		"https://example.com/a?b=c":             "https://example.com/a?b=c",
		"http://127.0.0.1:8080/mcp":             "http://127.0.0.1:8080/mcp",
		"http://127.1.2.3/":                     "http://127.1.2.3/",
		"HTTP://LOCALHOST:80/x":                 "http://localhost/x",
		"http://[::1]:3000/mcp":                 "http://[::1]:3000/mcp",
		"http://[::1]:80/mcp":                   "http://[::1]/mcp",
		"https://[2001:DB8::1]:443/":            "https://[2001:db8::1]/",
		"https://example.com:/mcp":              "https://example.com/mcp",
		"https://example.com/path%2Fwith%2Fenc": "https://example.com/path%2Fwith%2Fenc",
	}
	for in, want := range good {
		got, err := CanonicalEndpoint(in)
		if err != nil || got != want {
			t.Errorf("CanonicalEndpoint(%q) = %q, %v; want %q", in, got, err, want)
			continue
		}
		if again, _ := CanonicalEndpoint(got); again != got {
			t.Errorf("not idempotent: %q -> %q", got, again)
		}
	}

	bad := map[string]string{
		"http://example.com/":          "only for loopback",
		"http://10.0.0.1/":             "only for loopback",
		"http://localhost.evil.com/":   "only for loopback",
		"ws://localhost/":              "must use https",
		"example.com/mcp":              "absolute",
		"/mcp":                         "absolute",
		"mailto:a@b":                   "absolute",
		"https://user@example.com/":    "userinfo",
		"https://user:pw@example.com/": "userinfo",
		"https://@example.com/":        "userinfo",
		"https://example.com/#x":       "fragment",
		"https://example.com/#":        "fragment",
		"https:///mcp":                 "no host",
		"https://example.com:99999/":   "invalid port",
		"https://example.com:0/":       "invalid port",
		"http://[fe80::1%25eth0]/":     "zone",
		"https://exa mple.com/":        "spaces",
		"https://example.com/\n":       "control",
		"":                             "absolute",
	}
	for in, want := range bad {
		got, err := CanonicalEndpoint(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CanonicalEndpoint(%q) = %q, %v; want error containing %q", in, got, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "pw@") {
			t.Errorf("error quotes the URL: %v", err)
		}
	}
}
