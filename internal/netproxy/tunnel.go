package netproxy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"time"
)

var discardLog = log.New(io.Discard, "", 0)

// tunnel serves a CONNECT: the CONNECT host is checked before anything
// is dialled, then the TLS server name of the client's first record, if
// it sends one, before a byte of it reaches the server.
func (s *Session) tunnel(w http.ResponseWriter, r *http.Request) {
	host, port := splitHostPort(r.Host, "443")
	ctx, cancel := context.WithTimeout(r.Context(), s.p.cfg.Timeout)
	defer cancel()
	addr, err := s.p.check(ctx, host)
	if err != nil {
		s.fail(w, err)
		return
	}
	up, err := s.p.cfg.Dial(ctx, "tcp", net.JoinHostPort(addr.String(), port))
	if err != nil {
		http.Error(w, "tiny-go network proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "tiny-go network proxy: cannot tunnel", http.StatusInternalServerError)
		return
	}
	down, rw, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if !s.track(down, up) {
		return
	}
	defer s.untrack(down, up)
	if _, err := down.Write([]byte("HTTP/1.1 200 Connection Established\r\n\r\n")); err != nil {
		return
	}
	// Server-first protocols work: the server's bytes flow at once.
	fromUp := make(chan struct{})
	go func() {
		io.Copy(down, up)
		closeWrite(down)
		close(fromUp)
	}()
	client := bufio.NewReaderSize(rw.Reader, 16<<10+5)
	if sni := serverName(client); sni != "" && !strings.EqualFold(strings.TrimSuffix(sni, "."), host) {
		if allow, rule := s.p.decide(sni); !allow {
			s.refused(refusalFor(sni, rule))
			return
		}
	}
	io.Copy(up, client)
	closeWrite(up)
	// The other direction ends when the server closes; Close ends a
	// tunnel left open.
	<-fromUp
}

// decide asks the rules about host; no rules allow nothing.
func (p *Proxy) decide(host string) (bool, string) {
	if p.cfg.Rules == nil {
		return false, ""
	}
	return p.cfg.Rules.Domain(strings.ToLower(strings.TrimSuffix(host, ".")))
}

// refusalFor is the refusal of a host the rules do not allow.
func refusalFor(host, rule string) *refusal {
	if rule != "" {
		return &refusal{"network: blocked " + host + " — denied by " + rule + " in the settings' permissions"}
	}
	return &refusal{blockedLine(host)}
}

// serverName is the server name of the TLS ClientHello at the start of
// br, without consuming it; "" when the client sends something else.
func serverName(br *bufio.Reader) string {
	// One byte first: a client of another protocol may send fewer than
	// a record header and wait for the answer.
	if b, err := br.Peek(1); err != nil || b[0] != 0x16 { // a handshake record
		return ""
	}
	hdr, err := br.Peek(5)
	if err != nil {
		return ""
	}
	n := int(hdr[3])<<8 | int(hdr[4])
	rec, err := br.Peek(5 + min(n, 16<<10))
	if err != nil {
		return ""
	}
	var name string
	errStop := errors.New("stop")
	// crypto/tls parses the hello; the handshake stops right after it.
	tls.Server(helloConn{bytes.NewReader(rec)}, &tls.Config{
		GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			name = h.ServerName
			return nil, errStop
		},
	}).Handshake()
	return name
}

// helloConn is a net.Conn that reads a recorded ClientHello and writes
// nowhere.
type helloConn struct{ r io.Reader }

func (c helloConn) Read(b []byte) (int, error)     { return c.r.Read(b) }
func (c helloConn) Write(b []byte) (int, error)    { return len(b), nil }
func (helloConn) Close() error                     { return nil }
func (helloConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (helloConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (helloConn) SetDeadline(time.Time) error      { return nil }
func (helloConn) SetReadDeadline(time.Time) error  { return nil }
func (helloConn) SetWriteDeadline(time.Time) error { return nil }

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		return
	}
	c.Close()
}

// track registers a tunnel's two ends, so Close ends them; false when
// the session is already closed.
func (s *Session) track(down, up net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.done:
		down.Close()
		up.Close()
		return false
	default:
	}
	s.tunnels[down], s.tunnels[up] = struct{}{}, struct{}{}
	return true
}

func (s *Session) untrack(down, up net.Conn) {
	s.mu.Lock()
	delete(s.tunnels, down)
	delete(s.tunnels, up)
	s.mu.Unlock()
	down.Close()
	up.Close()
}
