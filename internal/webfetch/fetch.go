// Package webfetch is the web_fetch tool: it fetches one URL over HTTPS,
// within the user's WebFetch(domain:...) rules and never at a private
// address (netguard), follows redirects hop by hop under the same checks,
// and gives the model the page as Markdown (HTML converted, JSON, plain
// text and Markdown as they are), cut at a byte cap, cached 15 minutes.
package webfetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/tiny-agent/tiny-go/internal/netguard"
	"github.com/tiny-agent/tiny-go/internal/permissions"
)

// Defaults of the configurable limits.
const (
	DefaultMaxBytes     = 10 << 20
	DefaultTimeout      = 30 * time.Second
	DefaultMaxRedirects = 10
	CacheTTL            = 15 * time.Minute
)

// Rules are the permission rules a fetch and each of its redirects are
// judged by (*permissions.Settings).
type Rules interface {
	Domain(host string) (permissions.Kind, *permissions.Rule)
	NamesDomain(host string) bool
}

// Options configure a Fetcher; zero values are the defaults.
type Options struct {
	MaxBytes     int64         // the most of a response body read
	Timeout      time.Duration // the whole fetch, redirects and body included
	MaxRedirects int
	Rules        Rules // nil: no rules
	// FollowUnlisted reports whether a redirect to another host that no
	// rule allows is followed (nobody is asked: approval auto); otherwise
	// the model is told where the page moved and may fetch it, which asks.
	FollowUnlisted func() bool
	// Transport replaces the guarded one (benchmarks); nil is the default.
	Transport http.RoundTripper
	Now       func() time.Time
}

// Fetcher fetches pages; it is safe for concurrent use.
type Fetcher struct {
	o      Options
	client *http.Client
	cache  *cache
}

// New returns a Fetcher with o's limits.
func New(o Options) *Fetcher {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = DefaultMaxRedirects
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	f := &Fetcher{o: o, cache: newCache(o.Now)}
	rt := o.Transport
	if rt == nil {
		guard := &netguard.Guard{Allowed: f.namedByRule, Timeout: o.Timeout}
		rt = &http.Transport{
			// The environment's proxy is not used: the guard judges the
			// address connected to, which must be the server's.
			Proxy:                 nil,
			DialContext:           guard.DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          16,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ExpectContinueTimeout: time.Second,
		}
	}
	// Redirects are followed by hand (fetch), each hop checked; no
	// cookie jar, so nothing a server sets is ever sent back.
	f.client = &http.Client{Transport: rt, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return f
}

func (f *Fetcher) namedByRule(host string) bool {
	return f.o.Rules != nil && f.o.Rules.NamesDomain(host)
}

// Page is a fetched page, converted.
type Page struct {
	URL         string // the URL fetched, after the upgrade to https
	FinalURL    string // where the last redirect led
	Status      int
	ContentType string
	Title       string
	Text        string // Markdown or the text passed through
	Converted   bool   // Text was converted from HTML
	Bytes       int64  // body bytes read
	Truncated   bool   // the body was larger than MaxBytes
	MaxBytes    int64
	Hosts       []string // every host of the redirect chain
	Cached      bool
}

// Refusal is a fetch refused before or between requests (a rule, a
// private address, a binary page): its text is the whole answer.
type Refusal struct{ Msg string }

func (r *Refusal) Error() string { return r.Msg }

// Moved is a redirect to another host that was not followed.
type Moved struct{ From, To string }

func (m *Moved) Error() string {
	return fmt.Sprintf("%s redirects to %s, another host, which was not followed; call web_fetch with that URL to fetch it", m.From, m.To)
}

// Fetch fetches rawURL (http is upgraded to https unless a rule names a
// local host) and converts it; a page fetched in the last 15 minutes is
// answered from the cache.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) (*Page, error) {
	u, err := f.target(rawURL)
	if err != nil {
		return nil, err
	}
	// The permission rules judged the call already; judged here again,
	// a deny rule holds also where the tool is called without them.
	if err := f.checkHost(permissions.NormalHost(u.Hostname()), nil); err != nil {
		return nil, err
	}
	key := u.String()
	if p, ok := f.cache.get(key); ok {
		for _, h := range p.Hosts {
			if err := f.checkHost(h, nil); err != nil {
				return nil, err
			}
		}
		c := *p
		c.Cached = true
		return &c, nil
	}
	ctx, cancel := context.WithTimeout(ctx, f.o.Timeout)
	defer cancel()
	p, err := f.fetch(ctx, u)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
			return nil, &Refusal{Msg: fmt.Sprintf("Error: %s did not answer within %s (the web_fetch time-out, setting web_fetch_timeout).", key, f.o.Timeout)}
		}
		return nil, err
	}
	f.cache.put(key, p)
	return p, nil
}

// target parses and checks the URL the model gave.
func (f *Fetcher) target(rawURL string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &Refusal{Msg: fmt.Sprintf("Error: %q is not an http or https URL.", rawURL)}
	}
	if u.User != nil {
		return nil, &Refusal{Msg: "Error: the URL carries a user name or password; web_fetch sends no credentials. Give the URL without them."}
	}
	u.Fragment, u.RawFragment = "", ""
	f.upgrade(u)
	return u, nil
}

// upgrade makes http https, except for a local host (localhost, a
// loopback or private address) that a rule names: a development server
// seldom has a certificate, and the user named it.
func (f *Fetcher) upgrade(u *url.URL) {
	if u.Scheme != "http" {
		return
	}
	host := u.Hostname()
	if local(host) && f.namedByRule(host) {
		return
	}
	u.Scheme = "https"
	if u.Port() == "80" {
		u.Host = u.Hostname()
		if strings.Contains(u.Host, ":") {
			u.Host = "[" + u.Host + "]"
		}
	}
}

func local(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	_, blocked := netguard.Blocked(ip)
	return blocked
}

// checkHost refuses a host a deny rule names; from is the page that
// redirected to it, or nil.
func (f *Fetcher) checkHost(host string, from *url.URL) error {
	if f.o.Rules == nil {
		return nil
	}
	kind, rule := f.o.Rules.Domain(host)
	if kind == permissions.Deny {
		what := "Error: " + host
		if from != nil {
			what = "Error: " + from.String() + " redirects to " + host + ", and that"
		}
		return &Refusal{Msg: fmt.Sprintf("%s is denied by the permission rule %s in %s; nothing was fetched from it.", what, rule.Text, rule.Source)}
	}
	return nil
}

func (f *Fetcher) followUnlisted() bool { return f.o.FollowUnlisted != nil && f.o.FollowUnlisted() }

// mayFollow tells whether a redirect to host (another host) is followed.
func (f *Fetcher) mayFollow(host string) bool {
	if f.followUnlisted() {
		return true
	}
	if f.o.Rules == nil {
		return false
	}
	kind, _ := f.o.Rules.Domain(host)
	return kind == permissions.Allow
}

// fetch follows redirects from u, checking each hop.
func (f *Fetcher) fetch(ctx context.Context, u *url.URL) (*Page, error) {
	p := &Page{URL: u.String(), MaxBytes: f.o.MaxBytes}
	for hop := 0; ; hop++ {
		p.Hosts = append(p.Hosts, permissions.NormalHost(u.Hostname()))
		resp, err := f.get(ctx, u)
		if err != nil {
			return nil, err
		}
		loc := resp.Header.Get("Location")
		if resp.StatusCode < 300 || resp.StatusCode >= 400 || loc == "" {
			defer resp.Body.Close()
			p.FinalURL, p.Status = u.String(), resp.StatusCode
			return p, f.read(p, resp)
		}
		drain(resp.Body)
		next, err := f.nextHop(u, loc, hop)
		if err != nil {
			return nil, err
		}
		u = next
	}
}

// nextHop checks the redirect from u to loc.
func (f *Fetcher) nextHop(u *url.URL, loc string, hop int) (*url.URL, error) {
	if hop+1 > f.o.MaxRedirects {
		return nil, &Refusal{Msg: fmt.Sprintf("Error: %s redirected more than %d times; nothing was fetched.", u, f.o.MaxRedirects)}
	}
	next, err := u.Parse(loc)
	if err != nil || (next.Scheme != "http" && next.Scheme != "https") {
		return nil, &Refusal{Msg: fmt.Sprintf("Error: %s redirects to %q, which is not an http or https URL.", u, loc)}
	}
	next.User = nil // credentials in a Location are never sent
	next.Fragment, next.RawFragment = "", ""
	f.upgrade(next)
	host := permissions.NormalHost(next.Hostname())
	if err := f.checkHost(host, u); err != nil {
		return nil, err
	}
	if host != permissions.NormalHost(u.Hostname()) && !f.mayFollow(host) {
		return nil, &Moved{From: u.String(), To: next.String()}
	}
	return next, nil
}

// get sends one GET with no credentials: no cookies, no Authorization,
// nothing of the model provider's.
func (f *Fetcher) get(ctx context.Context, u *url.URL) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, &Refusal{Msg: fmt.Sprintf("Error: %s: %v", u, err)}
	}
	req.Header.Set("User-Agent", "tiny-go web_fetch (+https://github.com/tiny-agent/tiny-go)")
	req.Header.Set("Accept", "text/html, text/markdown, text/plain, application/json;q=0.9, */*;q=0.5")
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, f.dialError(u, err)
	}
	return resp, nil
}

// dialError makes a failed request one line.
func (f *Fetcher) dialError(u *url.URL, err error) error {
	var be *netguard.BlockedError
	if errors.As(err, &be) {
		return &Refusal{Msg: fmt.Sprintf("Error: %s refused: %v. Add %s to permissions.allow to allow it.", u, be, permissions.DomainRule(be.Host))}
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return err
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return context.DeadlineExceeded
	}
	return &Refusal{Msg: fmt.Sprintf("Error: fetching %s failed: %v", u, unwrapURLError(err))}
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func drain(r io.ReadCloser) {
	_, _ = io.CopyN(io.Discard, r, 64<<10)
	r.Close()
}
