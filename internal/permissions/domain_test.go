package permissions

import "testing"

func TestDomainRules(t *testing.T) {
	s, _, _ := project(t, "",
		`{"permissions":{"allow":["WebFetch(domain:docs.python.org)","WebFetch(domain:*.go.dev)","WebFetch(domain:127.0.0.1)"],"deny":["WebFetch(domain:evil.example)","WebFetch(domain:*.ads.go.dev)"],"ask":["WebFetch(domain:pkg.go.dev)"]}}`,
		`{"permissions":{"allow":["WebFetch"]}}`)
	cases := []struct {
		host string
		want Kind
		rule string
	}{
		{"docs.python.org", Allow, "WebFetch(domain:docs.python.org)"},
		{"DOCS.python.org.", Allow, "WebFetch(domain:docs.python.org)"},
		{"docs.python.org:8443", Allow, "WebFetch(domain:docs.python.org)"},
		{"python.org", "", ""},
		{"xdocs.python.org", "", ""},
		{"tour.go.dev", Allow, "WebFetch(domain:*.go.dev)"},
		{"go.dev", "", ""},
		{"pkg.go.dev", Ask, "WebFetch(domain:pkg.go.dev)"},
		{"x.ads.go.dev", Deny, "WebFetch(domain:*.ads.go.dev)"},
		{"evil.example", Deny, "WebFetch(domain:evil.example)"},
		{"127.0.0.1:8080", Allow, "WebFetch(domain:127.0.0.1)"},
		{"127.0.0.2", "", ""},
		{"", "", ""},
	}
	for _, c := range cases {
		k, r := s.Domain(c.host)
		got := ""
		if r != nil {
			got = r.Text
		}
		if k != c.want || got != c.rule {
			t.Errorf("Domain(%q) = %q %q; want %q %q", c.host, k, got, c.want, c.rule)
		}
	}
	// The tool's own calls are judged by their URL's host; the bare allow
	// rule still allows what no domain rule speaks of.
	for url, want := range map[string]Kind{
		"https://evil.example/x":        Deny,
		"https://pkg.go.dev/net/http":   Ask,
		"https://docs.python.org/3/":    Allow,
		"https://unknown.example/page":  Allow,
		"http://EVIL.example.:80/login": Deny,
	} {
		if k, _ := s.Decide("web_fetch", args("url", url)); k != want {
			t.Errorf("Decide(web_fetch %s) = %q; want %q", url, k, want)
		}
	}
}

// Only an allow rule naming the host itself opens a guarded address: a
// wildcard does not, and a deny rule wins.
func TestNamesDomain(t *testing.T) {
	s, _, _ := project(t, "", `{"permissions":{"allow":["WebFetch(domain:*)","WebFetch(domain:localhost)","WebFetch(domain:[::1])","WebFetch(domain:10.0.0.5)"],"deny":["WebFetch(domain:10.0.0.5)"]}}`, "")
	for host, want := range map[string]bool{"localhost": true, "LOCALHOST:3000": true, "::1": true, "[::1]:8080": true, "127.0.0.1": false, "10.0.0.5": false, "example.com": false} {
		if got := s.NamesDomain(host); got != want {
			t.Errorf("NamesDomain(%q) = %v; want %v", host, got, want)
		}
	}
	var none *Settings
	if k, r := none.Domain("x"); k != "" || r != nil || none.NamesDomain("x") {
		t.Error("nil settings must say nothing")
	}
}

func TestDomainRuleOfAlwaysAnswer(t *testing.T) {
	if got := RuleOf([]string{"web_fetch", "domain", "Docs.Python.org"}); got != "WebFetch(domain:docs.python.org)" {
		t.Errorf("RuleOf = %q", got)
	}
}
