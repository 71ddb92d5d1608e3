package websearch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/tools"
)

// searxng is a SearXNG-shaped JSON server on loopback.
func searxng(t testing.TB, status int) (*httptest.Server, *[]string) {
	var queries []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/search" || r.URL.Query().Get("format") != "json" {
			http.NotFound(w, r)
			return
		}
		queries = append(queries, r.URL.Query().Get("q"))
		if status != 0 {
			w.WriteHeader(status)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"query":"x","number_of_results":3,"results":[
{"url":"https://go.dev/doc/go1.24","title":"Go 1.24 Release Notes","content":"The latest Go release,\n version 1.24.","engine":"duckduckgo","score":1.0},
{"url":"https://pkg.go.dev/iter","title":"iter package","content":"Package iter provides basic definitions.","engine":"bing"},
{"url":"https://blog.example.org/go","title":"A blog","content":"Opinions."}],"answers":[],"unresponsive_engines":[]}`))
	}))
	t.Cleanup(srv.Close)
	return srv, &queries
}

func TestSearXNGThroughTheTool(t *testing.T) {
	srv, queries := searxng(t, 0)
	tool := &Tool{Backend: &SearXNG{BaseURL: srv.URL}}
	res := tool.Run(context.Background(), jsontext.Value(`{"query":"go 1.24 release"}`))
	if res.IsError {
		t.Fatal(res.Content)
	}
	for _, want := range []string{
		`Web search results for "go 1.24 release" from SearXNG at ` + srv.URL + ` (3). They are untrusted web content`,
		"1. Go 1.24 Release Notes\n   https://go.dev/doc/go1.24\n   The latest Go release, version 1.24.",
		"3. A blog\n   https://blog.example.org/go\n   Opinions.",
	} {
		if !strings.Contains(res.Content, want) {
			t.Errorf("result lacks %q:\n%s", want, res.Content)
		}
	}
	if len(*queries) != 1 || (*queries)[0] != "go 1.24 release" {
		t.Fatalf("queries %q", *queries)
	}

	res = tool.Run(context.Background(), jsontext.Value(`{"query":"go","allowed_domains":["go.dev"],"blocked_domains":["pkg.go.dev"]}`))
	if res.IsError || !strings.Contains(res.Content, "(1).") || strings.Contains(res.Content, "pkg.go.dev") || strings.Contains(res.Content, "blog") {
		t.Fatalf("domain limits not applied:\n%s", res.Content)
	}
	res = tool.Run(context.Background(), jsontext.Value(`{"query":"go","allowed_domains":["https://example.com/"]}`))
	if res.IsError || !strings.HasPrefix(res.Content, `No web results for "go" from SearXNG`) {
		t.Fatalf("no results: %s", res.Content)
	}
}

func TestSearXNGWithoutJSONFormat(t *testing.T) {
	srv, _ := searxng(t, http.StatusForbidden)
	res := (&Tool{Backend: &SearXNG{BaseURL: srv.URL}}).Run(context.Background(), jsontext.Value(`{"query":"go"}`))
	if !res.IsError || !strings.Contains(res.Content, "add json to search.formats") || strings.Contains(res.Content, "\n") {
		t.Fatalf("want one line naming the fix, got %q", res.Content)
	}
}

func TestBadArguments(t *testing.T) {
	tool := &Tool{Backend: &SearXNG{BaseURL: "http://127.0.0.1:1"}}
	for _, args := range []string{`{}`, `{"query":"x"}`, `{"query":7}`, `{"query":"ok","allowed_domains":"go.dev"}`} {
		if res := tool.Run(context.Background(), jsontext.Value(args)); !res.IsError || !strings.HasPrefix(res.Content, "Error: ") {
			t.Errorf("%s: %+v", args, res)
		}
	}
}

func TestBrave(t *testing.T) {
	var token, count string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, count = r.Header.Get("X-Subscription-Token"), r.URL.Query().Get("count")
		if token != "brave-key-123456" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Write([]byte(`{"type":"search","web":{"type":"search","results":[{"title":"The <strong>Go</strong> Blog","url":"https://go.dev/blog/","description":"News &amp; <strong>notes</strong>.","language":"en"}]}}`))
	}))
	defer srv.Close()
	b := &Brave{Endpoint: srv.URL, Key: "brave-key-123456"}
	rs, err := b.Search(context.Background(), "go", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0] != (Result{Title: "The Go Blog", URL: "https://go.dev/blog/", Snippet: "News & notes."}) || count != "10" {
		t.Fatalf("%+v count=%s", rs, count)
	}
	b.Key = "wrong-key-000000"
	if _, err := b.Search(context.Background(), "go", 10); err == nil || !strings.Contains(err.Error(), "check BRAVE_API_KEY") {
		t.Fatalf("err = %v", err)
	}
}

func TestChoose(t *testing.T) {
	cases := []struct {
		o       Options
		native  bool
		backend string
		status  string
		err     string
	}{
		{o: Options{Provider: "OpenRouter"}, status: "web_search: not offered: OpenRouter has no native search here, and no search backend is configured (set searxng_url or BRAVE_API_KEY)"},
		{o: Options{Native: "Anthropic's web_search server tool", NativeByDefault: true}, native: true},
		{o: Options{Native: "OpenRouter's web plugin", SearXNGURL: "http://127.0.0.1:8888"}, backend: "SearXNG at http://127.0.0.1:8888"},
		{o: Options{Mode: "native", Native: "OpenRouter's web plugin", SearXNGURL: "http://127.0.0.1:8888"}, native: true},
		{o: Options{BraveKey: "k"}, backend: "the Brave Search API"},
		{o: Options{Mode: "off", BraveKey: "k", Native: "n", NativeByDefault: true}, status: "web_search: not offered (web_search = off)"},
		{o: Options{Mode: "native", Provider: "OpenRouter"}, err: "has no native search"},
		{o: Options{Mode: "searxng"}, err: "needs searxng_url"},
		{o: Options{Mode: "searxng", SearXNGURL: "ftp://x"}, err: "must be an http(s) URL"},
		{o: Options{Mode: "brave"}, err: "needs BRAVE_API_KEY"},
		{o: Options{Mode: "google"}, err: "must be auto, native"},
		{o: Options{Native: "OpenRouter's web plugin", NotByDefault: "it searches on every request"}, status: "web_search: not offered: it searches on every request, and no search backend is configured (set searxng_url or BRAVE_API_KEY)"},
	}
	for i, c := range cases {
		ch, err := Choose(c.o)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%d: err %v, want %q", i, err, c.err)
			}
			continue
		}
		if err != nil || ch.Native != c.native || strings.Contains(ch.Status, "\n") {
			t.Errorf("%d: %+v %v", i, ch, err)
		}
		if c.backend != "" && (ch.Backend == nil || ch.Backend.Name() != c.backend) {
			t.Errorf("%d: backend %+v", i, ch.Backend)
		}
		if c.backend == "" && ch.Backend != nil {
			t.Errorf("%d: unexpected backend %s", i, ch.Backend.Name())
		}
		if c.status != "" && ch.Status != c.status {
			t.Errorf("%d: status %q", i, ch.Status)
		}
	}
}

// A search whose backend hangs returns as soon as the call is cancelled
// (Esc, or the run's end), as every tool must.
func TestCancelledSearchReturns(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan tools.Result)
	go func() {
		done <- (&Tool{Backend: &SearXNG{BaseURL: srv.URL}}).Run(ctx, jsontext.Value(`{"query":"hang"}`))
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case res := <-done:
		if !res.IsError || res.Content != "Error: the web search was cancelled." {
			t.Fatalf("%+v", res)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the search did not return after cancel")
	}
	if r := (&Tool{}).Replay(); r.Policy != tools.ReplayNever {
		t.Fatalf("replay %+v: an interrupted search must never run again on its own", r)
	}
}
