package cli

import (
	"strings"

	"github.com/tiny-agent/tiny-go/internal/netproxy"
	"github.com/tiny-agent/tiny-go/internal/permissions"
)

// networkProxy is the proxy of --network rules: the WebFetch(domain:…)
// allow and deny rules of the settings' permissions, as they are at start.
//
// Wiring point (issue 45): the web_fetch work has its own domain matching
// (permissions/domain.go) and address guard (netguard); netproxy.Rules,
// Config.Dial and Config.Private are where they plug in, so that
// web_fetch and commands decide a host the same way.
func (a *runner) networkProxy() *netproxy.Proxy {
	var list netproxy.DomainList
	if a.perms != nil {
		list = domainList(a.perms.set.Rules)
	}
	return netproxy.New(netproxy.Config{Rules: list})
}

// domainList is the WebFetch(domain:…) patterns of rules; ask rules allow
// nothing, since a command's connection cannot wait for an answer.
func domainList(rules []permissions.Rule) netproxy.DomainList {
	var l netproxy.DomainList
	for _, r := range rules {
		inner, ok := strings.CutPrefix(r.Text, "WebFetch(domain:")
		if !ok || !strings.HasSuffix(inner, ")") {
			continue
		}
		pattern := strings.TrimSuffix(inner, ")")
		switch r.Kind {
		case permissions.Allow:
			l.Allow = append(l.Allow, pattern)
		case permissions.Deny:
			l.Deny = append(l.Deny, pattern)
		}
	}
	return l
}
