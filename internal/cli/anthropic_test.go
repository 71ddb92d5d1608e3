package cli

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/provider/anthropic"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

func anthropicCLI(t *testing.T, srv *providertest.Server) *cliRun {
	c := newCLI(t, srv)
	delete(c.env, "OPENROUTER_API_KEY")
	c.env["TINY_PROVIDER"] = "anthropic"
	c.env["ANTHROPIC_API_KEY"] = "sk-ant-test"
	c.env["TINY_MODEL"] = "claude-sonnet-4-5"
	return c
}

// A tool loop through the native Messages API: thinking comes back with
// its signature, the session records the Anthropic adapter, and a resume
// under another provider is the configuration change the planner blocks.
func TestAnthropicProviderToolLoop(t *testing.T) {
	srv := providertest.New(t,
		providertest.Reply{Reasoning: "Read it first.", Signature: "sig/+=", ToolCalls: []providertest.ToolCall{toolCall("toolu_1", "read", `{"path":"a.txt"}`)}},
		providertest.Reply{Text: "It says hello."},
	)
	c := anthropicCLI(t, srv)
	c.write("a.txt", "hello\n")
	code, stdout, stderr := c.main("", "--reasoning", "low", "what does a.txt say?")
	if code != 0 || stdout != "It says hello.\n" {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].Path != "/v1/messages" || reqs[0].Header.Get("x-api-key") != "sk-ant-test" {
		t.Fatalf("requests: %d, path %s", len(reqs), reqs[0].Path)
	}
	if !bytes.Contains(reqs[1].Body, []byte(`{"type":"thinking","thinking":"Read it first.","signature":"sig/+="},{"type":"tool_use","id":"toolu_1","name":"read","input":{"path":"a.txt"}}`)) {
		t.Fatalf("follow-up lacks the thinking block: %s", reqs[1].Body)
	}
	if !bytes.Contains(reqs[0].Body, []byte(`"thinking":{"type":"enabled","budget_tokens":4096}`)) {
		t.Fatalf("no thinking budget: %s", reqs[0].Body)
	}
	st := c.state()
	if st.Header.Provider != "anthropic" {
		t.Errorf("header provider %q", st.Header.Provider)
	}
	b, _ := os.ReadFile(c.sessions()[0])
	if !bytes.Contains(b, []byte(`"adapterIdentity":"`+anthropic.AdapterIdentity+`"`)) || !bytes.Contains(b, []byte(`"routingIdentity":"anthropic:claude-sonnet-4-5"`)) {
		t.Fatal("the snapshot does not name the Anthropic adapter")
	}
}

func TestResumeUnderAnotherProviderIsBlocked(t *testing.T) {
	c := anthropicCLI(t, providertest.New(t))
	id := openAttemptSession(t, c)
	before, _ := os.ReadFile(c.sessions()[0])
	c.env["OPENROUTER_API_KEY"] = "test-key"
	delete(c.env, "TINY_PROVIDER")
	code, _, stderr := c.main("", "--session", id, "continue")
	if code != 1 || !strings.Contains(stderr, "configuration_changed") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if after, _ := os.ReadFile(c.sessions()[0]); !bytes.Equal(before, after) {
		t.Fatal("a blocked resume appended bytes")
	}
	// Under the provider it was started with, it resumes.
	c.env["TINY_PROVIDER"] = "anthropic"
	srv := providertest.New(t, providertest.Reply{Text: "resumed"})
	c.env["TINY_ENDPOINT"] = srv.URL()
	code, stdout, stderr := c.main("", "--session", id)
	if code != 0 || c.state().Operation != nil {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	if st := c.state(); *st.Transcript[len(st.Transcript)-1].Content != "resumed" || st.Operation != nil {
		t.Fatal("the resumed run did not finish")
	}
}

func TestAnthropicNeedsItsKey(t *testing.T) {
	c := newCLI(t, nil)
	c.env["TINY_PROVIDER"] = "anthropic"
	code, _, stderr := c.main("", "hello")
	if code != 2 || !strings.Contains(stderr, "ANTHROPIC_API_KEY") || len(c.sessions()) != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	c.env["TINY_PROVIDER"] = "gemini"
	if code, _, stderr := c.main("", "hello"); code != 2 || !strings.Contains(stderr, "TINY_PROVIDER") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	c.env["TINY_PROVIDER"] = ""
	if code, _, stderr := c.main("", "--reasoning", "max", "hello"); code != 2 || !strings.Contains(stderr, "--reasoning") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}
