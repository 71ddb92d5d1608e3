package netproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Config is what a Proxy checks with and how it reaches the network.
type Config struct {
	// Rules decide hosts; nil allows none.
	Rules Rules
	// Resolve looks a host name up; nil uses the system resolver. Tests
	// map names to loopback addresses with it.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// Dial connects to an address the proxy resolved and checked; nil
	// uses a net.Dialer. (A wiring point: netguard's dialer re-checks the
	// address it connects to.)
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Private reports addresses reached only when a rule names the host;
	// nil is Private.
	Private func(netip.Addr) bool
	// Timeout bounds resolving and connecting; 0 is 30 s.
	Timeout time.Duration
}

// Proxy checks and forwards the requests of every command's session.
type Proxy struct {
	cfg       Config
	transport *http.Transport
}

// New returns a Proxy for cfg.
func New(cfg Config) *Proxy {
	if cfg.Resolve == nil {
		cfg.Resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	if cfg.Dial == nil {
		d := &net.Dialer{}
		cfg.Dial = d.DialContext
	}
	if cfg.Private == nil {
		cfg.Private = Private
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	p := &Proxy{cfg: cfg}
	// Plain HTTP goes to the address the handler checked (the URL's host
	// is replaced by it), never through another proxy of the environment.
	p.transport = &http.Transport{
		Proxy:                 nil,
		DialContext:           cfg.Dial,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       30 * time.Second,
		ResponseHeaderTimeout: 0,
		DisableCompression:    true,
	}
	return p
}

// refusal is a host the proxy would not reach, and the line that says so.
type refusal struct{ line string }

func (r *refusal) Error() string { return r.line }

// check decides host and, when allowed, resolves it and picks an address
// the rules let it reach. A refusal is a *refusal.
func (p *Proxy) check(ctx context.Context, host string) (netip.Addr, error) {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	allow, rule := false, ""
	if p.cfg.Rules != nil {
		allow, rule = p.cfg.Rules.Domain(host)
	}
	if !allow {
		if rule != "" {
			return netip.Addr{}, &refusal{fmt.Sprintf("network: blocked %s — denied by %s in the settings' permissions", host, rule)}
		}
		return netip.Addr{}, &refusal{blockedLine(host)}
	}
	addrs, err := p.resolve(ctx, host)
	if err != nil {
		return netip.Addr{}, err
	}
	for _, a := range addrs {
		if !p.cfg.Private(a) || names(rule, host) {
			return a, nil
		}
	}
	return netip.Addr{}, &refusal{fmt.Sprintf("network: blocked %s — it resolves to %s, a private address; only a rule naming it exactly reaches it: %s in .claude/settings.json", host, addrs[0], RuleFor(host))}
}

// blockedLine is the line for a host no rule allows.
func blockedLine(host string) string {
	return fmt.Sprintf("network: blocked %s — allow it with %s in .claude/settings.json", host, RuleFor(host))
}

func (p *Proxy) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	addrs, err := p.cfg.Resolve(ctx, host)
	if err == nil && len(addrs) == 0 {
		err = errors.New("no address")
	}
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", host, err)
	}
	return addrs, nil
}

// Session serves one command's listener and keeps its refusals.
type Session struct {
	p       *Proxy
	srv     *http.Server
	done    chan struct{}
	mu      sync.Mutex
	order   []string       // refusal lines, first seen first
	counts  map[string]int // how often each was refused
	tunnels map[net.Conn]struct{}
}

// Serve serves l, a listener in a command's network namespace, until
// Close.
func (p *Proxy) Serve(l net.Listener) *Session {
	s := &Session{p: p, done: make(chan struct{}), counts: map[string]int{}, tunnels: map[net.Conn]struct{}{}}
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 30 * time.Second, ErrorLog: discardLog}
	go func() {
		s.srv.Serve(l)
		close(s.done)
	}()
	return s
}

// Close stops the session: its listener, its connections and tunnels.
func (s *Session) Close() {
	s.srv.Close()
	<-s.done
	s.mu.Lock()
	for c := range s.tunnels {
		c.Close()
	}
	s.mu.Unlock()
}

// Refusals are the session's refusal lines, one per host and reason, with
// how many connections it refused when more than one.
func (s *Session) Refusals() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.order))
	for _, l := range s.order {
		if n := s.counts[l]; n > 1 {
			l += " (" + strconv.Itoa(n) + " connections)"
		}
		out = append(out, l)
	}
	return out
}

func (s *Session) refused(r *refusal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.counts[r.line] == 0 {
		s.order = append(s.order, r.line)
	}
	s.counts[r.line]++
}

// ServeHTTP proxies one request: a CONNECT tunnel or a plain HTTP request
// in absolute form.
func (s *Session) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		s.tunnel(w, r)
		return
	}
	if r.URL.Scheme != "http" || r.URL.Host == "" {
		http.Error(w, "tiny-go network proxy: only http:// URLs in absolute form and CONNECT", http.StatusBadRequest)
		return
	}
	host, port := splitHostPort(r.URL.Host, "80")
	ctx, cancel := context.WithTimeout(r.Context(), s.p.cfg.Timeout)
	addr, err := s.p.check(ctx, host)
	cancel()
	if err != nil {
		s.fail(w, err)
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.URL.Host = net.JoinHostPort(addr.String(), port)
	out.Host = r.URL.Host
	removeHopHeaders(out.Header)
	resp, err := s.p.transport.RoundTrip(out)
	if err != nil {
		http.Error(w, "tiny-go network proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	removeHopHeaders(resp.Header)
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}

// fail answers a refused or failed request: 403 with the refusal line,
// which the session keeps, or 502.
func (s *Session) fail(w http.ResponseWriter, err error) {
	var ref *refusal
	if errors.As(err, &ref) {
		s.refused(ref)
		http.Error(w, ref.line, http.StatusForbidden)
		return
	}
	http.Error(w, "tiny-go network proxy: "+err.Error(), http.StatusBadGateway)
}

// hopHeaders are the connection's own, not forwarded (RFC 9110, 7.6.1),
// with the proxy's credentials.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

func removeHopHeaders(h http.Header) {
	for _, f := range h["Connection"] {
		for name := range strings.SplitSeq(f, ",") {
			h.Del(strings.TrimSpace(name))
		}
	}
	for _, k := range hopHeaders {
		h.Del(k)
	}
}

// splitHostPort splits hostport, which may lack a port, and unbrackets
// an IPv6 host.
func splitHostPort(hostport, defPort string) (host, port string) {
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		return h, p
	}
	return strings.Trim(hostport, "[]"), defPort
}
