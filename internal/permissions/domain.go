package permissions

import (
	"net"
	"net/url"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/cctools"
)

// Domain rules are Claude Code's WebFetch(domain:HOST): HOST is a host
// name or address, matched without its port and case-insensitively;
// "*.example.com" matches every name under example.com (not example.com
// itself) and "*" every host. web_fetch is judged by the host of its URL,
// and the same rules judge each redirect it follows and, with the network
// in rules mode, every host a command connects to.

// DomainPrefix starts the specifier of a domain rule.
const DomainPrefix = "domain:"

// Domain is what the WebFetch(domain:...) rules say of host: Deny, Ask or
// Allow with the rule that said it (deny over ask over allow), or "" and
// nil when none names it. A bare WebFetch rule is not a domain rule and
// is not consulted here: it speaks of the tool, not of hosts.
func (s *Settings) Domain(host string) (Kind, *Rule) {
	if s == nil {
		return "", nil
	}
	host = NormalHost(host)
	if host == "" {
		return "", nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, k := range []Kind{Deny, Ask, Allow} {
		for i := range s.Rules {
			if r := &s.Rules[i]; r.Kind == k && r.tool == cctools.WebFetch && matchDomain(r.spec, host) {
				return k, r
			}
		}
	}
	return "", nil
}

// NamesDomain reports whether an allow rule names host itself, without a
// wildcard, and no deny rule names it: what lets a request reach a
// loopback, private or link-local address (netguard), which "*" or
// "*.example.com" must never open by accident.
func (s *Settings) NamesDomain(host string) bool {
	host = NormalHost(host)
	if k, _ := s.Domain(host); s == nil || k == Deny || host == "" {
		return false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for i := range s.Rules {
		r := &s.Rules[i]
		if spec, ok := strings.CutPrefix(r.spec, DomainPrefix); ok && r.Kind == Allow && r.tool == cctools.WebFetch && NormalHost(spec) == host {
			return true
		}
	}
	return false
}

// DomainRule is the allow rule that names host: what a refusal tells the
// user to add.
func DomainRule(host string) string {
	return cctools.WebFetch + "(" + DomainPrefix + NormalHost(host) + ")"
}

// NormalHost is host as rules match it: lower case, without a port, the
// brackets of an IPv6 address or a final dot.
func NormalHost(host string) string {
	host = strings.TrimSpace(host)
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	return strings.ToLower(strings.TrimSuffix(host, "."))
}

// matchDomain matches a normal host against a rule's specifier.
func matchDomain(spec, host string) bool {
	pat, ok := strings.CutPrefix(spec, DomainPrefix)
	if !ok {
		return false
	}
	pat = NormalHost(pat)
	switch {
	case pat == "*":
		return true
	case strings.HasPrefix(pat, "*."):
		return strings.HasSuffix(host, pat[1:]) && len(host) > len(pat)-1
	}
	return pat != "" && pat == host
}

// MatchesFetch reports whether the specifier of a WebFetch rule
// ("domain:docs.python.org") matches a fetch of rawURL: the --allowedTools
// and --disallowedTools of print mode.
func MatchesFetch(spec, rawURL string) bool {
	host := urlHost(rawURL)
	return host != "" && matchDomain(strings.TrimSpace(spec), host)
}

// urlHost is the host of a web_fetch URL, or "" when it has none.
func urlHost(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return ""
	}
	return NormalHost(u.Hostname())
}
