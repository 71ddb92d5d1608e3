package sandbox

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/netproxy"
	"github.com/tiny-agent/tiny-go/internal/overlay"
)

// loopbackHosts resolves the tests' names to loopback addresses only.
func loopbackHosts(m map[string]string) func(context.Context, string) ([]netip.Addr, error) {
	return func(_ context.Context, h string) ([]netip.Addr, error) {
		if a, ok := m[h]; ok {
			return []netip.Addr{netip.MustParseAddr(a)}, nil
		}
		return nil, fmt.Errorf("no test host %s", h)
	}
}

// countingListener listens on 127.0.0.2 and counts what reaches it.
func countingListener(t *testing.T) (string, *atomic.Int64) {
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatalf("listening on 127.0.0.2: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	var n atomic.Int64
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
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port, &n
}

// A command under --network rules reaches an allowed host through the
// proxy, by HTTP and by HTTPS, and nothing else: a host no rule allows is
// refused with the rule to add (by HTTP, by CONNECT, and by the TLS
// server name in a tunnel opened to the allowed host), and plain TCP
// (bash's /dev/tcp, curl told not to use the proxy) finds no way out. Not one
// connection reaches 127.0.0.2. The unprivileged pass runs it as a user.
func TestNetworkRulesForCommands(t *testing.T) { forEachInit(t, testNetworkRules) }

func testNetworkRules(t *testing.T) {
	requireLandlock(t)
	for _, tool := range []string{"curl", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed (.ci/run installs it): %v", tool, err)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "allowed page for "+r.Host)
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "tls page")
	}))
	defer tlsSrv.Close()
	_, tlsPort, _ := net.SplitHostPort(tlsSrv.Listener.Addr().String())
	priv, reached := countingListener(t)
	proxy := netproxy.New(netproxy.Config{
		Rules:   netproxy.DomainList{Allow: []string{"allowed.test"}},
		Resolve: loopbackHosts(map[string]string{"allowed.test": "127.0.0.1", "other.test": "127.0.0.2"}),
	})
	l := newLayout(t)
	s := newSandbox(t, Policy{Mode: Workspace, WorkDir: l.work, Getenv: l.getenv, NetworkRules: proxy})
	if s.NetworkRules() == nil {
		t.Fatal("--network rules is not in force")
	}
	checkInit(t, s)
	script := fmt.Sprintf(`curl -sS -m 10 http://allowed.test:%[1]s/; echo " status=$?"
curl -sS -m 10 -o /dev/null -w '%%{http_code}\n' http://other.test:%[2]s/
curl -sS -m 10 https://other.test:%[2]s/ 2>&1; echo "https status=$?"
curl -sS -m 10 --noproxy '*' http://127.0.0.2:%[2]s/ 2>&1; echo "direct status=$?"
bash -c 'echo x > /dev/tcp/127.0.0.2/%[2]s' 2>&1; echo "tcp status=$?"
bash -c 'echo x > /dev/tcp/127.0.0.1/%[1]s' 2>&1; echo "tcp own loopback status=$?"
curl -sSk -m 10 https://allowed.test:%[3]s/; echo " tls status=$?"
curl -sSk -m 10 --connect-to other.test:%[3]s:allowed.test:%[3]s https://other.test:%[3]s/ 2>/dev/null; echo "sni status=$?"
echo "$HTTPS_PROXY $NO_PROXY"`, port, priv, tlsPort)
	for _, over := range []bool{false, true} {
		t.Run(fmt.Sprintf("overlay=%v", over), func(t *testing.T) {
			checkRulesRun(t, s, l.work, script, port, over, reached)
		})
	}
}

// checkRulesRun runs script under s, over an overlay of work when over
// is set (as bash commands run), and checks what it reached.
func checkRulesRun(t *testing.T, s *Sandbox, work, script, port string, over bool, reached *atomic.Int64) {
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = work
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	start := func() error { return s.Start(cmd) }
	if over {
		tx, err := overlay.Begin(filepath.Join(work, ".tiny-agent", "tx"), work, "t-net")
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Discard()
		start = func() error { return s.StartOverlay(cmd, Overlay{Lower: work, Upper: tx.Upper(), Work: tx.Work()}) }
	}
	if err := start(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	got := out.String()
	t.Logf("command output:\n%s", got)
	for _, want := range []string{
		"allowed page for allowed.test:" + port + " status=0\n",
		"403\n",
		"https status=56\n",
		"direct status=7\n",
		"tls page tls status=0\n",
		"http://127.0.0.1:3128 localhost,127.0.0.1,::1\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	if strings.Contains(got, "sni status=0") { // CONNECT to allowed.test, a hello for other.test
		t.Error("a TLS hello for other.test went through a tunnel to allowed.test")
	}
	if strings.Contains(got, "tcp status=0") || strings.Contains(got, "tcp own loopback status=0") {
		t.Error("plain TCP got out")
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("%d connections reached 127.0.0.2", n)
	}
	want := "network: blocked other.test — allow it with WebFetch(domain:other.test) in .claude/settings.json (3 connections)"
	if got := strings.Join(s.NetworkRefusals(cmd), "\n"); got != want {
		t.Errorf("refusals:\n%s\nwant:\n%s", got, want)
	}
}

// Where commands cannot have namespaces, --network rules fails closed:
// one warning line, and commands get no TCP at all, as with --network
// off (Landlock ABI 4 or later).
func TestNetworkRulesWithoutNamespacesFailsClosed(t *testing.T) {
	if abi := ABI(); abi < 4 {
		t.Skipf("Landlock ABI %d has no network rules (needs 4)", abi)
	}
	priv, reached := countingListener(t)
	l := newLayout(t)
	s, warning, err := New(Policy{Mode: Workspace, WorkDir: l.work, Getenv: l.getenv, NoNamespaces: true,
		NetworkRules: netproxy.New(netproxy.Config{})})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := "--network rules: no namespaces for commands (namespaces disabled): commands may not use TCP at all (as with --network off)"
	if !strings.Contains(warning, want) || strings.Count(warning, "\n") != 0 {
		t.Errorf("warning %q, want one line with %q", warning, want)
	}
	if s.NetworkRules() != nil || !s.NetworkOff() {
		t.Fatalf("rules in force %v, TCP off %v; want no rules and no TCP", s.NetworkRules() != nil, s.NetworkOff())
	}
	out, err := run(t, s, l.work, "bash -c 'echo x > /dev/tcp/127.0.0.2/"+priv+"' 2>&1")
	if err == nil || !strings.Contains(out, "ermission denied") {
		t.Errorf("a command connected: %v: %s", err, out)
	}
	if reached.Load() != 0 {
		t.Error("a connection reached 127.0.0.2")
	}
	if _, _, err := New(Policy{Mode: Off, WorkDir: l.work, NetworkRules: netproxy.New(netproxy.Config{})}); err == nil {
		t.Error("--sandbox off --network rules was accepted")
	}
}
