package cli

import (
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// TestInteractiveRetryLine runs the real program in tmux against a local
// endpoint (no key) that answers 429 with Retry-After: 1 once, then
// answers slowly: the banner names the endpoint's host, the status line
// says "retrying in 1s: HTTP 429" while the request waits, and once the
// answer is there the line is gone from the screen.
func TestInteractiveRetryLine(t *testing.T) {
	needTmux(t)
	srv := providertest.New(t,
		providertest.Reply{Status: 429, RetryAfter: "1"},
		providertest.Reply{Text: "answer after the wait", Delay: 2 * time.Second},
	)
	u, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin := programAs(t, "tiny-go")
	p := &tmuxPane{t: t, socket: fmt.Sprintf("tinygo-retry-%d", os.Getpid())}
	script := fmt.Sprintf(`cd %s && TERM=tmux-256color OPENROUTER_API_KEY= TINY_API_KEY= OTEL_SDK_DISABLED=true TINY_ENDPOINT=%s %s; echo EXIT=$?; sleep 60`, dir, srv.URL(), bin)
	p.tmux("new-session", "-d", "-x", "100", "-y", "30", "-s", "s", "sh", "-c", script)
	t.Cleanup(func() { killTmux(p.socket) })

	p.waitText("Ctrl+C clears a draft")
	if s := p.screen(); !strings.Contains(s, "provider: "+u.Host+"\n") || strings.Contains(strings.ToLower(s), "openrouter") {
		t.Fatalf("the banner does not name %s:\n%s", u.Host, s)
	}
	p.text("hello")
	p.keys("Enter")
	// The wait counts down from 1s, then the line says the request went
	// again until the slow answer begins; a loaded machine may show only
	// the second.
	p.wait("the retry line", func(s string) bool {
		return strings.Contains(s, "retrying in 1s: HTTP 429 · Esc aborts") || strings.Contains(s, "Sending again after HTTP 429… ")
	})
	p.waitText("answer after the wait")
	p.wait("the retry line to go", func(s string) bool {
		return !strings.Contains(s, "retrying") && !strings.Contains(s, "Sending again")
	})
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
	p.keys("C-c", "C-c") // on an empty idle prompt: the second exits
	p.waitText("EXIT=0")
	if s := p.screen(); strings.Contains(s, "retrying") || strings.Contains(s, "Sending again") || strings.Contains(s, "Failed") {
		t.Fatalf("after the run:\n%s", s)
	}
}
