// Package netguard keeps tiny-go's own requests (web_fetch, the command
// network proxy) off the machine's and its network's private addresses:
// loopback, link-local (where cloud metadata endpoints live), private
// ranges, unique-local IPv6, carrier-grade NAT and the unspecified and
// multicast addresses. It judges the address a connection is about to
// use, after DNS resolution, in the dialer's Control function, so a name
// that resolves to 127.0.0.1, or a redirect to 169.254.169.254, is refused
// before a packet is sent. A host the user's rules name is let through.
package netguard

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// ranges are the blocked prefixes, with the reason a refusal gives.
var ranges = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local (metadata)"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (carrier-grade NAT)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fc00::/7"), "unique-local (private)"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local NAT64"},
}

// Blocked tells whether ip is one no request may reach unless a rule
// names it, and what kind of address it is ("loopback", "private", ...).
func Blocked(ip netip.Addr) (what string, blocked bool) {
	if !ip.IsValid() {
		return "invalid", true
	}
	ip = ip.Unmap()
	for _, r := range ranges {
		if r.prefix.Contains(ip) {
			return r.what, true
		}
	}
	return "", false
}

// BlockedError is a connection refused because of its address.
type BlockedError struct {
	Host string     // the name dialled ("example.com", "127.0.0.2")
	IP   netip.Addr // the address it resolved to
	What string     // what Blocked said of it
}

func (e *BlockedError) Error() string {
	if e.Host == e.IP.String() {
		return fmt.Sprintf("%s is a %s address; no request goes there unless a rule names it", e.Host, e.What)
	}
	return fmt.Sprintf("%s resolves to %s, a %s address; no request goes there unless a rule names it", e.Host, e.IP, e.What)
}

// Guard dials TCP connections that never reach a blocked address, except
// for hosts Allowed says a rule names.
type Guard struct {
	// Allowed reports whether a rule names host (a name or an address
	// literal) so that it may be reached even at a blocked address; nil
	// allows none.
	Allowed func(host string) bool
	// Timeout bounds a connection's set-up; 0 means 30 seconds.
	Timeout time.Duration
}

// DialContext is an http.Transport's DialContext: addr's host is
// resolved and each address it resolves to is judged just before the
// connection is made to it.
func (g *Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("netguard: %w", err)
	}
	timeout := g.Timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	d := net.Dialer{Timeout: timeout, Control: g.Control(host)}
	return d.DialContext(ctx, network, addr)
}

// Control is a net.Dialer Control function for connections to host: it
// refuses a blocked address unless Allowed(host) or Allowed(address).
func (g *Guard) Control(host string) func(network, address string, c syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("netguard: %q is not an address: %w", address, err)
		}
		ip := ap.Addr().Unmap()
		what, blocked := Blocked(ip)
		if !blocked || g.allowed(host) || g.allowed(ip.String()) {
			return nil
		}
		return &BlockedError{Host: host, IP: ip, What: what}
	}
}

func (g *Guard) allowed(host string) bool { return g.Allowed != nil && g.Allowed(host) }
