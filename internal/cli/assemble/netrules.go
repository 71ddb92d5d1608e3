package assemble

import (
	"github.com/tiny-agent/tiny-go/internal/netproxy"
	"github.com/tiny-agent/tiny-go/internal/permissions"
)

// networkProxy is the proxy of --network rules. It decides a host as
// web_fetch does: the settings' WebFetch(domain:…) rules, read at each
// connection (an "always" answer to a fetch holds for commands at once),
// and netguard's list of the addresses only a rule naming the host opens
// (netproxy.Private).
func (a *Runner) networkProxy() *netproxy.Proxy {
	var set *permissions.Settings
	if a.Perms != nil {
		set = a.Perms.Set
	}
	return netproxy.New(netproxy.Config{Rules: domainRules{set}})
}

// domainRules are the settings' domain rules as the proxy asks them; an
// ask rule allows nothing, since a command's connection cannot wait for
// an answer.
type domainRules struct{ set *permissions.Settings }

func (d domainRules) Domain(host string) (bool, string) {
	kind, rule := d.set.Domain(host)
	if rule == nil {
		return false, ""
	}
	return kind == permissions.Allow, rule.Text
}
