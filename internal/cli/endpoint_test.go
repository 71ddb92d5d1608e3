package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/cli/modelwire"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// TestLocalEndpointNeedsNoKey: a local OpenAI-compatible server runs with
// no key at all, TINY_API_KEY is its bearer token when set, the OpenRouter
// key never goes to another host, and the session names the host.
func TestLocalEndpointNeedsNoKey(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Text: "one"}, providertest.Reply{Text: "two"})
	host := strings.TrimPrefix(strings.TrimSuffix(srv.URL(), "/v1"), "http://")

	c := newCLI(t, srv)
	delete(c.env, "OPENROUTER_API_KEY")
	code, stdout, stderr := c.main("", "hi")
	if code != 0 || stdout != "one\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if got := srv.Requests()[0].Header.Get("Authorization"); got != "" {
		t.Fatalf("Authorization %q sent without a key", got)
	}
	if p := c.state().Header.Provider; p != host {
		t.Fatalf("header provider %q, want the endpoint host %q", p, host)
	}
	_, show, _ := c.main("", "session", "show", c.state().Header.ID)
	if !strings.Contains(show, host) || strings.Contains(show, "openrouter") {
		t.Fatalf("session show does not name %s:\n%s", host, show)
	}

	c = newCLI(t, srv)
	c.env["OPENROUTER_API_KEY"] = "sk-or-must-stay-home"
	c.env["TINY_API_KEY"] = "local-token"
	if code, _, stderr := c.main("", "hi"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got := srv.Requests()[1].Header.Get("Authorization"); got != "Bearer local-token" {
		t.Fatalf("Authorization %q, want the TINY_API_KEY bearer", got)
	}
}

// TestOneShotRetriesAndShowsTheWait: a 429 with Retry-After: 1 and a 503
// do not fail the run; each wait is one line on stderr.
func TestOneShotRetriesAndShowsTheWait(t *testing.T) {
	srv := providertest.New(t,
		providertest.Reply{Status: 429, RetryAfter: "1"},
		providertest.Reply{Status: 503, RetryAfter: "1"},
		providertest.Reply{Text: "made it"},
	)
	c := newCLI(t, srv)
	code, stdout, stderr := c.main("", "hi")
	if code != 0 || stdout != "made it\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	for _, want := range []string{"retrying in 1s: HTTP 429\n", "retrying in 1s: HTTP 503\n"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	// --json shows the waits on stderr too (stdout carries the events).
	srv.Enqueue(providertest.Reply{Status: 429, RetryAfter: "1"}, providertest.Reply{Text: "again"})
	code, _, stderr = c.main("", "--json", "--session", c.state().Header.ID, "more")
	if code != 0 || !strings.Contains(stderr, "retrying in 1s: HTTP 429\n") {
		t.Fatalf("--json: exit %d, stderr %q", code, stderr)
	}
	// One attempt per run: the re-sends are one logical request.
	st := c.state()
	if st.Operation != nil || len(st.Transcript) != 4 || bytes.Count(mustRead(t, c.sessions()[0]), []byte(`"type":"stepAttempt"`)) != 2 {
		t.Fatalf("state: operation %v, %d messages", st.Operation, len(st.Transcript))
	}
}

// TestContextWindowLookedUpOnceWhenNeeded: the model list is asked once per
// process, and not at all when --context-window is given.
func TestContextWindowLookedUpOnceWhenNeeded(t *testing.T) {
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "read", `{"path":"a.txt"}`)}},
		providertest.Reply{Text: "done"},
		providertest.Reply{Text: "again"},
	)
	srv.SetModels(map[string]int64{modelwire.DefaultModel: 200000})
	c := newCLI(t, srv)
	c.write("a.txt", "x")
	if code, _, stderr := c.main("", "hi"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := srv.ModelLists(); n != 1 {
		t.Fatalf("%d model-list requests in a two-step run, want 1", n)
	}
	if code, _, stderr := c.main("", "--context-window", "50000", "--session", c.state().Header.ID, "more"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := srv.ModelLists(); n != 1 {
		t.Fatalf("model list asked despite --context-window (%d requests)", n)
	}
}
