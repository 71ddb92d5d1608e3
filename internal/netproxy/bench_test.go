package netproxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"
)

// BenchmarkConnection is one connection's whole life, direct and through
// the proxy, all on loopback: the difference is the proxy's cost per
// connection (docs/performance.md, "Network rules").
//
//   - tcp: connect, one byte each way, close; through the proxy a CONNECT
//     tunnel (the rules checked, the address dialled, the first bytes
//     read for a TLS server name);
//   - http: a GET on a new connection; through the proxy the request is
//     checked and forwarded.
func BenchmarkConnection(b *testing.B) {
	echo := echoServer(b)
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	b.Cleanup(web.Close)
	_, webPort, _ := net.SplitHostPort(web.Listener.Addr().String())
	cfg := Config{Rules: DomainList{Allow: []string{"bench.test"}}, Resolve: hosts(map[string]string{"bench.test": "127.0.0.1"})}
	_, proxied := session(b, cfg)
	direct := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	proxyAddr := proxied.Transport.(*http.Transport).Proxy
	pu, _ := proxyAddr(&http.Request{})
	_, echoPort, _ := net.SplitHostPort(echo)

	b.Run("tcp/direct", func(b *testing.B) {
		defer cpuPerOp(b)()
		for b.Loop() {
			c, err := net.Dial("tcp", echo)
			if err != nil {
				b.Fatal(err)
			}
			pingClose(b, c, bufio.NewReader(c))
		}
	})
	b.Run("tcp/proxy", func(b *testing.B) {
		defer cpuPerOp(b)()
		for b.Loop() {
			c, err := net.Dial("tcp", pu.Host)
			if err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(c, "CONNECT bench.test:%s HTTP/1.1\r\nHost: bench.test:%s\r\n\r\n", echoPort, echoPort)
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil || resp.StatusCode != 200 {
				b.Fatal(resp, err)
			}
			pingClose(b, c, br)
		}
	})
	get := func(b *testing.B, c *http.Client, url string) {
		defer cpuPerOp(b)()
		for b.Loop() {
			resp, err := c.Get(url)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	b.Run("http/direct", func(b *testing.B) { get(b, direct, "http://127.0.0.1:"+webPort+"/") })
	b.Run("http/proxy", func(b *testing.B) { get(b, proxied, "http://bench.test:"+webPort+"/") })
}

// cpuPerOp reports the process's CPU time (user + system: client, proxy
// and servers, which all run here) per op when the returned func runs:
// steadier than wall time on a shared machine.
func cpuPerOp(b *testing.B) func() {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	start := cpu()
	return func() {
		b.ReportMetric(float64((cpu()-start).Microseconds())/float64(b.N), "cpu-µs/op")
	}
}

// pingClose sends a byte, reads its echo and closes c.
func pingClose(b *testing.B, c net.Conn, r *bufio.Reader) {
	if _, err := c.Write([]byte{'x'}); err != nil {
		b.Fatal(err)
	}
	if _, err := r.ReadByte(); err != nil {
		b.Fatal(err)
	}
	c.Close()
}

// echoServer echoes every connection on loopback.
func echoServer(b *testing.B) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				io.Copy(c, c)
				c.Close()
			}()
		}
	}()
	return l.Addr().String()
}
