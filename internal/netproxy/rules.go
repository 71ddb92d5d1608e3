// Package netproxy is the only way out of a command's network namespace
// under --network rules: a small HTTP proxy that tiny-go serves on a
// listener made inside that namespace (sandbox, "Network rules"). Plain
// HTTP requests are checked by their host, CONNECT tunnels by the CONNECT
// host and then by the TLS server name the client sends, against the
// domain allow and deny rules; a host that resolves to a loopback,
// private, link-local or metadata address is refused unless a rule names
// it. Each refusal is one line, kept per command, that names the host and
// the rule that would allow it.
package netproxy

import (
	"net/netip"
	"strings"

	"github.com/tiny-agent/tiny-go/internal/netguard"
)

// Rules decide hosts. It is the wiring point to the domain rules of
// web_fetch (WebFetch(domain:…) in the settings' permissions): DomainList
// is a simple stand-in with the same meaning.
type Rules interface {
	// Domain decides host (lower case, without port or brackets). rule
	// is the rule that decided, as written in the settings, or "" when
	// none did (then allow is false: only allowed hosts are reached).
	Domain(host string) (allow bool, rule string)
}

// DomainList holds WebFetch(domain:…) patterns: "example.com" matches that
// host only, "*.example.com" its subdomains (not itself). Deny wins.
type DomainList struct {
	Allow, Deny []string
}

// Domain implements Rules.
func (d DomainList) Domain(host string) (bool, string) {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, p := range d.Deny {
		if matchDomain(p, host) {
			return false, RuleFor(p)
		}
	}
	for _, p := range d.Allow {
		if matchDomain(p, host) {
			return true, RuleFor(p)
		}
	}
	return false, ""
}

// RuleFor is the settings rule that names pattern.
func RuleFor(pattern string) string { return "WebFetch(domain:" + pattern + ")" }

func matchDomain(pattern, host string) bool {
	pattern = strings.ToLower(strings.TrimSuffix(pattern, "."))
	if rest, ok := strings.CutPrefix(pattern, "*."); ok {
		return strings.HasSuffix(host, "."+rest)
	}
	return pattern == host
}

// names reports whether rule names host itself (not through a wildcard):
// only such a rule lets the proxy reach a private address.
func names(rule, host string) bool { return rule == RuleFor(host) }

// Private reports the addresses the proxy refuses unless a rule names
// the host: those netguard blocks for web_fetch (loopback, private,
// link-local with the metadata endpoint, CGNAT, multicast, ...), so both
// decide an address the same way.
func Private(a netip.Addr) bool {
	_, blocked := netguard.Blocked(a)
	return blocked
}
