package mcp

import (
	"net/url"
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

func FuzzCanonicalEndpoint(f *testing.F) {
	for _, seed := range []string{
		"https://example.com/mcp", "HTTP://LOCALHOST:80/x", "http://[::1]:3000/", "https://u@h/",
		"https://h/#f", "http://10.0.0.1/", "https://h:0443", "https://[2001:DB8::1]:443/?q=1", "",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := CanonicalEndpoint(raw)
		if err != nil {
			if strings.Contains(raw, "://") && strings.Contains(err.Error(), raw) {
				t.Fatalf("error quotes the input: %v", err)
			}
			return
		}
		again, err := CanonicalEndpoint(got)
		if err != nil || again != got {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", raw, got, again, err)
		}
		u := must(url.Parse(got))
		if u.User != nil || u.Fragment != "" || strings.Contains(got, "#") {
			t.Fatalf("%q kept userinfo or a fragment", got)
		}
		switch {
		case u.Scheme == "https":
		case u.Scheme == "http" && isLoopback(u.Hostname()):
		default:
			t.Fatalf("%q accepted", got)
		}
		if u.Host != strings.ToLower(u.Host) {
			t.Fatalf("host of %q not lower-case", got)
		}
		if (u.Scheme == "https" && u.Port() == "443") || (u.Scheme == "http" && u.Port() == "80") {
			t.Fatalf("default port kept in %q", got)
		}
	})
}
