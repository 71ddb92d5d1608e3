package netproxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// hosts is the tests' resolver: names to loopback addresses only, so no
// test can send traffic off the machine.
func hosts(m map[string]string) func(context.Context, string) ([]netip.Addr, error) {
	return func(_ context.Context, h string) ([]netip.Addr, error) {
		if a, ok := m[h]; ok {
			return []netip.Addr{netip.MustParseAddr(a)}, nil
		}
		return nil, fmt.Errorf("no such test host %s", h)
	}
}

// counter listens on addr and counts the connections that reach it.
func counter(t testing.TB, addr string) (port string, n *atomic.Int64) {
	l, err := net.Listen("tcp", addr+":0")
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	t.Cleanup(func() { l.Close() })
	n = new(atomic.Int64)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	_, port, _ = net.SplitHostPort(l.Addr().String())
	return port, n
}

// session serves a proxy with cfg on a loopback listener and returns a
// client that uses it.
func session(t testing.TB, cfg Config) (*Session, *http.Client) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := New(cfg).Serve(l)
	t.Cleanup(s.Close)
	u, _ := url.Parse("http://" + l.Addr().String())
	tr := &http.Transport{Proxy: http.ProxyURL(u), DisableKeepAlives: true}
	return s, &http.Client{Transport: tr}
}

func TestPlainHTTPAllowedAndRefused(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s %s", r.Host, r.Header.Get("Proxy-Authorization"))
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	privPort, reached := counter(t, "127.0.0.2")
	s, c := session(t, Config{
		Rules:   DomainList{Allow: []string{"allowed.test", "*.wild.test"}, Deny: []string{"denied.allowed.test"}},
		Resolve: hosts(map[string]string{"allowed.test": "127.0.0.1", "a.wild.test": "127.0.0.2", "other.test": "127.0.0.2"}),
	})
	req, _ := http.NewRequest("GET", "http://allowed.test:"+port+"/x", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "hello allowed.test:"+port+" " {
		t.Fatalf("allowed host: %d %q", resp.StatusCode, body)
	}
	for _, u := range []string{"http://other.test:" + privPort, "http://other.test:" + privPort + "/again",
		"http://127.0.0.2:" + privPort, "http://a.wild.test:" + privPort, "http://denied.allowed.test:" + privPort} {
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", u, resp.StatusCode)
		}
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("%d connections reached 127.0.0.2", n)
	}
	want := []string{
		"network: blocked other.test — allow it with WebFetch(domain:other.test) in .claude/settings.json (2 connections)",
		"network: blocked 127.0.0.2 — allow it with WebFetch(domain:127.0.0.2) in .claude/settings.json",
		"network: blocked a.wild.test — it resolves to 127.0.0.2, a private address; only a rule naming it exactly reaches it: WebFetch(domain:a.wild.test) in .claude/settings.json",
		"network: blocked denied.allowed.test — denied by WebFetch(domain:denied.allowed.test) in the settings' permissions",
	}
	if got := s.Refusals(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("refusals:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestConnectChecksHostAndServerName(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "secret page") }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	privPort, reached := counter(t, "127.0.0.2")
	s, c := session(t, Config{
		Rules:   DomainList{Allow: []string{"example.com"}},
		Resolve: hosts(map[string]string{"example.com": "127.0.0.1", "other.test": "127.0.0.2"}),
	})
	// httptest's certificate is for example.com.
	c.Transport.(*http.Transport).TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig
	resp, err := c.Get("https://example.com:" + port + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "secret page" {
		t.Fatalf("through the tunnel: %q", body)
	}
	if _, err := c.Get("https://other.test:" + privPort + "/"); err == nil {
		t.Fatal("CONNECT to other.test went through")
	}
	if reached.Load() != 0 {
		t.Fatal("a connection reached 127.0.0.2")
	}
	// CONNECT to the allowed host, then a hello for another: refused
	// before the hello reaches the server.
	conn := connect(t, c, "example.com:"+port)
	tc := tls.Client(conn, &tls.Config{ServerName: "other.test", InsecureSkipVerify: true})
	if err := tc.Handshake(); err == nil {
		t.Fatal("handshake for other.test went through a tunnel to example.com")
	}
	got := strings.Join(s.Refusals(), "\n")
	want := "network: blocked other.test — allow it with WebFetch(domain:other.test) in .claude/settings.json (2 connections)"
	if got != want {
		t.Errorf("refusals:\n%s\nwant:\n%s", got, want)
	}
}

// connect opens a CONNECT tunnel to target through the session's proxy.
func connect(t testing.TB, c *http.Client, target string) net.Conn {
	pu, _ := c.Transport.(*http.Transport).Proxy(&http.Request{URL: &url.URL{Scheme: "https", Host: target}})
	conn, err := net.Dial("tcp", pu.Host)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT %s: %v %v", target, resp, err)
	}
	return bufConn{conn, br}
}

// bufConn reads what the reader of the CONNECT answer holds first.
type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (c bufConn) Read(b []byte) (int, error) { return c.r.Read(b) }

func TestServerFirstProtocolThroughTunnel(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		io.WriteString(c, "SSH-2.0-banner\r\n")
		line, _ := bufio.NewReader(c).ReadString('\n')
		io.WriteString(c, "echo "+line)
		c.Close()
	}()
	_, c := session(t, Config{Rules: DomainList{Allow: []string{"localhost"}}, Resolve: hosts(map[string]string{"localhost": "127.0.0.1"})})
	_, port, _ := net.SplitHostPort(l.Addr().String())
	conn := connect(t, c, "localhost:"+port)
	defer conn.Close()
	br := bufio.NewReader(conn)
	if banner, _ := br.ReadString('\n'); banner != "SSH-2.0-banner\r\n" {
		t.Fatalf("banner %q", banner)
	}
	io.WriteString(conn, "hi\n")
	if got, _ := br.ReadString('\n'); got != "echo hi\n" {
		t.Fatalf("echo %q", got)
	}
}
