package cli

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
	"github.com/tiny-agent/tiny-go/internal/sandbox"
)

// --network rules end to end: a bash command's curl reaches a loopback
// server that a WebFetch(domain:localhost) rule allows, through tiny-go's
// proxy (the only way out of its namespace), while its request to
// 127.0.0.2, which no rule names, is refused: no connection reaches it,
// and the tool result ends with the one line naming the rule to add.
func TestOneShotNetworkRules(t *testing.T) {
	if sandbox.ABI() == 0 {
		t.Skip("this kernel has no Landlock")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "allowed page")
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var reached atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			reached.Add(1)
			c.Close()
		}
	}()
	_, priv, _ := net.SplitHostPort(l.Addr().String())
	// NO_PROXY names localhost, the command's own loopback.
	command := fmt.Sprintf(`NO_PROXY= no_proxy= curl -sS -m 10 http://localhost:%s/; echo; curl -sS -m 10 -o /dev/null -w '%%{http_code}\n' http://127.0.0.2:%s/`, port, priv)
	model := providertest.New(t, bashCall(t, command), providertest.Reply{Text: "done"})
	c := newCLI(t, model)
	c.write(".claude/settings.json", `{"permissions":{"allow":["WebFetch(domain:localhost)"]}}`)
	code, _, stderr := c.main("", "--network", "rules", "fetch it")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stderr, "--network rules") {
		t.Fatalf("rules not in force: %s", stderr)
	}
	msgs := model.Requests()[1].Chat.Messages
	result := *msgs[len(msgs)-1].Content
	want := "allowed page\n403\n\nnetwork: blocked 127.0.0.2 — allow it with WebFetch(domain:127.0.0.2) in .claude/settings.json"
	if !strings.HasPrefix(result, want) {
		t.Errorf("tool result:\n%s\nwant it to start with:\n%s", result, want)
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("%d connections reached 127.0.0.2", n)
	}
	c = newCLI(t, nil)
	code, _, stderr = c.main("", "--sandbox", "off", "--network", "rules", "hello")
	if code != 2 || !strings.Contains(stderr, "--network rules needs --sandbox workspace or read-only") {
		t.Errorf("--sandbox off --network rules: exit %d, %q", code, stderr)
	}
}
