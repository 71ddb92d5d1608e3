package netguard

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
)

func TestBlocked(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1": true, "127.0.0.2": true, "::1": true, "169.254.169.254": true, "10.1.2.3": true,
		"172.16.0.1": true, "172.31.255.255": true, "192.168.1.1": true, "100.100.100.200": true,
		"fd00:ec2::254": true, "fe80::1": true, "0.0.0.0": true, "::": true, "::ffff:127.0.0.1": true,
		"::ffff:10.0.0.1": true, "224.0.0.1": true, "255.255.255.255": true,
		"8.8.8.8": false, "172.32.0.1": false, "151.101.1.69": false, "2606:4700::1111": false,
	} {
		if _, got := Blocked(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Blocked(%s) = %v; want %v", addr, got, want)
		}
	}
}

// countingListener listens on a loopback address and counts the
// connections that reach it.
func countingListener(t *testing.T, addr string) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("cannot listen on %s: %v", addr, err)
	}
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	return ln.Addr().String(), &n
}

// A blocked address is refused before the connection is made: the
// listener sees nothing. A host a rule names gets through.
func TestGuardRefusesBeforeConnecting(t *testing.T) {
	addr, n := countingListener(t, "127.0.0.2:0")
	g := &Guard{}
	_, err := g.DialContext(context.Background(), "tcp", addr)
	var be *BlockedError
	if !errors.As(err, &be) || be.What != "loopback" || !strings.Contains(err.Error(), "127.0.0.2 is a loopback address") {
		t.Fatalf("dial = %v; want a loopback refusal", err)
	}
	_, port, _ := net.SplitHostPort(addr)
	if _, err := g.DialContext(context.Background(), "tcp", net.JoinHostPort("localhost", port)); !errors.As(err, &be) || be.Host != "localhost" {
		t.Fatalf("dial localhost = %v; want a refusal after resolution", err)
	}
	if got := n.Load(); got != 0 {
		t.Fatalf("%d connections reached the listener; want 0", got)
	}
	g.Allowed = func(h string) bool { return h == "127.0.0.2" }
	c, err := g.DialContext(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatalf("dial with a rule naming the address: %v", err)
	}
	c.Close()
}
