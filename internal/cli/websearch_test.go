package cli

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// searxngServer is a SearXNG-shaped JSON API on loopback; it records the
// queries it gets.
func searxngServer(t *testing.T) (*httptest.Server, *[]string) {
	var queries []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" {
			http.NotFound(w, r)
			return
		}
		queries = append(queries, r.URL.Query().Get("q"))
		w.Write([]byte(`{"query":"q","results":[{"url":"https://go.dev/doc/go1.25","title":"Go 1.25 Release Notes","content":"Go 1.25 arrives six months after Go 1.24.","engine":"duckduckgo"}]}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &queries
}

// Without native search, a configured SearXNG answers web_search through
// the agent loop: the model is offered the tool, the call is durable, and
// the results reach the model with the backend named.
func TestWebSearchThroughSearXNG(t *testing.T) {
	searx, queries := searxngServer(t)
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "web_search", `{"query":"go 1.25 release","blocked_domains":["example.com"]}`)}},
		providertest.Reply{Text: "Go 1.25 is out."},
	)
	c := newCLI(t, srv)
	c.env["TINY_SEARXNG_URL"] = searx.URL
	code, stdout, stderr := c.main("", "what is the latest Go?")
	if code != 0 || stdout != "Go 1.25 is out.\n" {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, stdout, stderr)
	}
	if len(*queries) != 1 || (*queries)[0] != "go 1.25 release" {
		t.Fatalf("SearXNG got %q", *queries)
	}
	reqs := srv.Requests()
	if !bytes.Contains(reqs[0].Body, []byte(`"name":"web_search"`)) {
		t.Fatal("web_search was not offered")
	}
	msgs := reqs[1].Chat.Messages
	got := *msgs[len(msgs)-1].Content
	for _, want := range []string{`Web search results for "go 1.25 release" from SearXNG at ` + searx.URL, "untrusted web content",
		"1. Go 1.25 Release Notes\n   https://go.dev/doc/go1.25\n   Go 1.25 arrives six months after Go 1.24."} {
		if !strings.Contains(got, want) {
			t.Errorf("the tool result lacks %q:\n%s", want, got)
		}
	}
	b, _ := os.ReadFile(c.sessions()[0])
	if !bytes.Contains(b, []byte(`"toolName":"web_search"`)) || !bytes.Contains(b, []byte(`"replayKey":"builtin:web_search:v1"`)) {
		t.Fatal("the call has no durable intent")
	}
}

// With neither native search nor a backend the tool is not offered, and
// /status says why in one line.
func TestWebSearchNotOffered(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Text: "ok"})
	c := newCLI(t, srv)
	code, stdout, stderr := c.main("hello\n/status\n/exit\n")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if bytes.Contains(srv.Requests()[0].Body, []byte("web_search")) {
		t.Fatal("web_search offered without a backend")
	}
	host := strings.TrimSuffix(strings.TrimPrefix(srv.URL(), "http://"), "/v1")
	want := "web_search: not offered: " + host + " has no native search here, and no search backend is configured (set searxng_url or BRAVE_API_KEY)\n"
	if !strings.Contains(stdout, want) {
		t.Fatalf("/status lacks %q:\n%s", want, stdout)
	}
	// A setting that cannot work stops the start with one line.
	c.env["TINY_WEB_SEARCH"] = "brave"
	code, _, stderr = c.main("", "hi")
	if code == 0 || !strings.Contains(stderr, "web_search = brave needs BRAVE_API_KEY") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

// A recorded Anthropic native search is shown with its sources, and the
// next turn of the session (a new process) sends the reply's blocks back
// byte for byte: the session keeps them beside itself, its format
// unchanged.
func TestWebSearchAnthropicNativeReplayed(t *testing.T) {
	srv := providertest.New(t, providertest.AnthropicWebSearch(), providertest.Reply{Text: "You're welcome."})
	c := anthropicCLI(t, srv)
	c.env["TINY_WEB_SEARCH"] = "native" // a loopback endpoint: auto would not
	code, stdout, stderr := c.main("", "what is the latest Go?")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	wantOut := providertest.AnthropicWebSearchText + "\n\nSources:\n" +
		"  1. Go 1.25 Release Notes - The Go Programming Language — https://go.dev/doc/go1.25\n" +
		"  2. Release History - The Go Programming Language — https://go.dev/doc/devel/release\n"
	if stdout != wantOut {
		t.Fatalf("stdout %q, want %q", stdout, wantOut)
	}
	if !bytes.Contains(srv.Requests()[0].Body, []byte(`{"type":"web_search_20250305","name":"web_search","max_uses":5`)) {
		t.Fatal("the server tool was not offered")
	}
	st := c.state()
	if got := *st.Transcript[len(st.Transcript)-1].Content; got != providertest.AnthropicWebSearchText {
		t.Fatalf("the session's answer is %q", got)
	}
	code, _, stderr = c.main("", "--session", st.Header.ID, "thanks")
	if code != 0 {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	second := srv.Requests()[1].Body
	turn := `{"role":"assistant","content":` + providertest.AnthropicWebSearchReplay() + `},{"role":"user","content":[{"type":"text","text":"thanks"`
	if !bytes.Contains(second, []byte(turn)) {
		t.Fatalf("the second request does not carry the search blocks byte for byte:\n%s\nwant\n%s", second, turn)
	}
}

// The same through OpenAI's Responses API: the web_search tool is
// offered, the citation is shown, and the next process sends the
// web_search_call and message items back as they came.
func TestWebSearchResponsesNativeReplayed(t *testing.T) {
	srv := providertest.New(t, providertest.ResponsesWebSearch(), providertest.Reply{Text: "ok"})
	c := &cliRun{t: t, dir: t.TempDir(), env: map[string]string{"TINY_PROVIDER": "openai-responses", "OPENAI_API_KEY": "test-key",
		"TINY_MODEL": "gpt-5.1", "TINY_ENDPOINT": srv.URL(), "OTEL_SDK_DISABLED": "true", "TINY_WEB_SEARCH": "native"}}
	code, stdout, stderr := c.main("", "what is the latest Go?")
	want := providertest.ResponsesWebSearchText + "\n\nSources:\n  1. Go 1.25 Release Notes — go.dev — https://go.dev/doc/go1.25?utm_source=openai\n"
	if code != 0 || stdout != want {
		t.Fatalf("exit %d, stdout %q, want %q: %s", code, stdout, want, stderr)
	}
	if !bytes.Contains(srv.Requests()[0].Body, []byte(`{"type":"web_search"}`)) {
		t.Fatal("web_search not offered")
	}
	code, _, stderr = c.main("", "--session", c.state().Header.ID, "thanks")
	if code != 0 {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	items := providertest.ResponsesWebSearchReplay() + `,{"type":"message","role":"user","content":[{"type":"input_text","text":"thanks"`
	if body := srv.Requests()[1].Body; !bytes.Contains(body, []byte(items)) {
		t.Fatalf("the second request does not carry the items byte for byte:\n%s\nwant\n%s", body, items)
	}
}

// OpenRouter's web plugin, asked for with web_search = native: the
// request asks for it, the sources are shown, and the next process sends
// the annotations back on the assistant message as they came.
func TestWebSearchOpenRouterPluginReplayed(t *testing.T) {
	srv := providertest.New(t, providertest.OpenRouterWebPlugin(), providertest.Reply{Text: "ok"})
	c := newCLI(t, srv)
	c.env["TINY_WEB_SEARCH"] = "native"
	code, stdout, stderr := c.main("", "what is the latest Go?")
	want := providertest.OpenRouterWebPluginText + "\n\nSources:\n  1. Go 1.25 Release Notes — https://go.dev/doc/go1.25\n  2. Release History — https://go.dev/doc/devel/release\n"
	if code != 0 || stdout != want {
		t.Fatalf("exit %d, stdout %q, want %q: %s", code, stdout, want, stderr)
	}
	if !bytes.Contains(srv.Requests()[0].Body, []byte(`"plugins":[{"id":"web"}]`)) || bytes.Contains(srv.Requests()[0].Body, []byte(`"name":"web_search"`)) {
		t.Fatal("the plugin was not asked for, or the tool offered beside it")
	}
	code, _, stderr = c.main("", "--session", c.state().Header.ID, "thanks")
	if code != 0 {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	msg := `"content":"` + providertest.OpenRouterWebPluginText + `",` + providertest.OpenRouterWebPluginReplay() + `}`
	if body := srv.Requests()[1].Body; !bytes.Contains(body, []byte(msg)) {
		t.Fatalf("the second request does not carry the annotations byte for byte:\n%s\nwant\n%s", body, msg)
	}
}

// Print mode (the Claude Agent SDK's protocol) sees web_search as
// WebSearch with Claude Code's input; --disallowedTools WebSearch leaves
// it out.
func TestWebSearchInPrintMode(t *testing.T) {
	searx, _ := searxngServer(t)
	srv := providertest.New(t,
		providertest.Reply{ToolCalls: []providertest.ToolCall{toolCall("c1", "web_search", `{"query":"go 1.25"}`)}},
		providertest.Reply{Text: "Found it."},
	)
	c := newCLI(t, srv)
	c.env["TINY_SEARXNG_URL"] = searx.URL
	r := c.claude(srv, "", "-p", "look it up", "--output-format", "stream-json", "--verbose", "--permission-mode", "bypassPermissions")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{`"WebSearch"`, `"name":"WebSearch","input":{"query":"go 1.25"}`, `from SearXNG at ` + searx.URL} {
		if !strings.Contains(strings.ReplaceAll(r.stdout, `": `, `":`), want) {
			t.Errorf("stream-json lacks %s:\n%s", want, r.stdout)
		}
	}
	srv.Enqueue(providertest.Reply{Text: "no search"})
	r = c.claude(srv, "", "-p", "again", "--output-format", "json", "--disallowedTools", "WebSearch")
	if r.code != 0 || bytes.Contains(srv.Requests()[2].Body, []byte("web_search")) {
		t.Fatalf("exit %d; --disallowedTools WebSearch still offered it: %s", r.code, r.stderr)
	}
}

// Line mode (the interactive loop without a terminal) shows the sources
// after the reply too.
func TestWebSearchSourcesInLineMode(t *testing.T) {
	srv := providertest.New(t, providertest.AnthropicWebSearch())
	c := anthropicCLI(t, srv)
	c.env["TINY_WEB_SEARCH"] = "native"
	code, stdout, stderr := c.main("what is the latest Go?\n/status\n/exit\n")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"the release history.\nSources:\n  1. Go 1.25 Release Notes - The Go Programming Language — https://go.dev/doc/go1.25\n",
		"web_search: Anthropic's web_search server tool (the provider's own search)\n"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
}
