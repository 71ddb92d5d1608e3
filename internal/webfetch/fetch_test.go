package webfetch

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/permissions"
)

// rules loads permission rules as a project's settings file holds them.
func rules(t testing.TB, allow, deny []string) *permissions.Settings {
	t.Helper()
	dir := t.TempDir()
	q := func(l []string) string {
		if len(l) == 0 {
			return "[]"
		}
		return `["` + strings.Join(l, `","`) + `"]`
	}
	path := filepath.Join(dir, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(`{"permissions":{"allow":`+q(allow)+`,"deny":`+q(deny)+`}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return permissions.Load([]string{path}, dir, dir)
}

// loopback is the rule that lets tests reach their 127.0.0.1 servers.
var loopback = []string{"WebFetch(domain:127.0.0.1)"}

const docPage = `<!doctype html><html><head><title>Widget docs</title><style>p{}</style></head><body>
<nav><a href="/home">Site navigation</a></nav>
<main>
<h1>Install the widget</h1>
<p>Read the <a href="/guide">setup guide</a> first.</p>
<pre><code class="language-go">fmt.Println("hi")
</code></pre>
<table><thead><tr><th>flag</th><th>meaning</th></tr></thead><tbody><tr><td>-v</td><td>verbose</td></tr></tbody></table>
<script>alert("x")</script>
</main>
<footer>Copyright footer</footer>
</body></html>`

func server(t testing.TB, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

func TestHTMLBecomesMarkdown(t *testing.T) {
	s := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, docPage)
	})
	p, err := New(Options{Rules: rules(t, loopback, nil)}).Fetch(context.Background(), s.URL+"/docs")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Install the widget", "[setup guide](" + s.URL + "/guide)", "```go\nfmt.Println(\"hi\")\n```", "| flag | meaning |", "| -v   | verbose |"} {
		if !strings.Contains(p.Text, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, p.Text)
		}
	}
	for _, not := range []string{"Site navigation", "Copyright footer", "alert", "p{}"} {
		if strings.Contains(p.Text, not) {
			t.Errorf("Markdown keeps %q:\n%s", not, p.Text)
		}
	}
	if p.Title != "Widget docs" || !p.Converted || p.Status != 200 || p.URL != s.URL+"/docs" {
		t.Errorf("page = %+v", p)
	}
}

func TestTextPassesThroughAndBinariesAreRefused(t *testing.T) {
	bodies := map[string][2]string{
		"/j":   {"application/json", `{"a": [1, 2]}`},
		"/md":  {"text/markdown", "# Title\n\n*x*"},
		"/pdf": {"application/pdf", "%PDF-1.7\n..."},
		"/png": {"image/png", "\x89PNG\r\n\x1a\n\x00\x00"},
		"/bin": {"text/plain", "ELF\x00\x00\x01"},
		"/raw": {"", "plain words"},
	}
	s := server(t, func(w http.ResponseWriter, r *http.Request) {
		b := bodies[r.URL.Path]
		w.Header()["Content-Type"] = []string{b[0]}
		fmt.Fprint(w, b[1])
	})
	f := New(Options{Rules: rules(t, loopback, nil)})
	for path, want := range map[string]string{"/j": `{"a": [1, 2]}`, "/md": "# Title\n\n*x*", "/raw": "plain words"} {
		p, err := f.Fetch(context.Background(), s.URL+path)
		if err != nil || p.Text != want || p.Converted {
			t.Errorf("%s: %v %+v", path, err, p)
		}
	}
	for path, want := range map[string]string{"/pdf": "is a PDF (application/pdf); web_fetch reads text pages only", "/png": "is image/png, not a text page", "/bin": "is text/plain, not a text page"} {
		_, err := f.Fetch(context.Background(), s.URL+path)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want one line with %q", path, err, want)
		}
	}
}

// A 20 MB page is read up to the cap, and the result says it was cut.
func TestHugePageIsCut(t *testing.T) {
	line := strings.Repeat("x", 1023) + "\n"
	s := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		for range 20 << 10 {
			if _, err := fmt.Fprint(w, line); err != nil {
				return
			}
		}
	})
	p, err := New(Options{Rules: rules(t, loopback, nil)}).Fetch(context.Background(), s.URL)
	if err != nil {
		t.Fatal(err)
	}
	if !p.Truncated || p.Bytes != DefaultMaxBytes {
		t.Fatalf("truncated %v after %d bytes; want the %d cap", p.Truncated, p.Bytes, DefaultMaxBytes)
	}
	out := Format(p, "")
	if !strings.Contains(out, "The page was cut: it is larger than the 10.0 MB cap (setting web_fetch_max_bytes)") ||
		!strings.Contains(out, "The text was cut to its first") || !strings.HasSuffix(out, "[cut here]\n"+EndUntrusted) {
		t.Errorf("no note of the cut:\n%s", out[:400])
	}
	if len(out) > MaxTextBytes+2000 {
		t.Errorf("result is %d bytes", len(out))
	}
}

// countingListener is a server on 127.0.0.2 that counts connections.
func countingListener(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
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

func redirector(t *testing.T, to string) *httptest.Server {
	return server(t, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, to, http.StatusFound) })
}

// A redirect to an address no rule names is refused with one line, and
// not one connection reaches it, whether the model asked for the address
// itself or a page redirected there.
func TestPrivateAddressIsRefused(t *testing.T) {
	private, n := countingListener(t)
	s := redirector(t, "http://"+private+"/latest/meta-data/")
	f := New(Options{Rules: rules(t, loopback, nil), FollowUnlisted: func() bool { return true }})
	for _, u := range []string{s.URL + "/moved", "http://" + private + "/", "https://" + private + "/"} {
		_, err := f.Fetch(context.Background(), u)
		if err == nil || !strings.Contains(err.Error(), "127.0.0.2 is a loopback address") ||
			!strings.Contains(err.Error(), "Add WebFetch(domain:127.0.0.2) to permissions.allow") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want a one-line refusal", u, err)
		}
	}
	if got := n.Load(); got != 0 {
		t.Fatalf("%d connections reached 127.0.0.2; want 0", got)
	}
	// Asked rather than followed when nobody said to follow.
	_, err := New(Options{Rules: rules(t, loopback, nil)}).Fetch(context.Background(), s.URL+"/moved")
	if m, ok := err.(*Moved); !ok || !strings.HasPrefix(m.To, "https://"+private) {
		t.Errorf("ask mode: %v; want the move reported", err)
	}
}

func TestRedirectToDeniedDomainIsRefused(t *testing.T) {
	s := redirector(t, "https://tracker.example/x")
	f := New(Options{Rules: rules(t, loopback, []string{"WebFetch(domain:*.example)"}), FollowUnlisted: func() bool { return true }})
	_, err := f.Fetch(context.Background(), s.URL+"/a")
	want := "Error: " + s.URL + "/a redirects to tracker.example, and that is denied by the permission rule WebFetch(domain:*.example)"
	if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("got %v; want %q", err, want)
	}
	_, err = f.Fetch(context.Background(), "https://tracker.example/y")
	if want := "Error: tracker.example is denied by the permission rule WebFetch(domain:*.example) in "; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("got %v; want %q", err, want)
	}
}

func TestRedirectsWithinTheHostAreFollowedUpToTheLimit(t *testing.T) {
	s := server(t, func(w http.ResponseWriter, r *http.Request) {
		var i int
		fmt.Sscanf(r.URL.Path, "/%d", &i)
		if i < 12 {
			http.Redirect(w, r, fmt.Sprintf("/%d", i+1), http.StatusMovedPermanently)
			return
		}
		fmt.Fprint(w, "arrived")
	})
	f := New(Options{Rules: rules(t, loopback, nil)})
	p, err := f.Fetch(context.Background(), s.URL+"/3")
	if err != nil || p.Text != "arrived" || p.FinalURL != s.URL+"/12" {
		t.Fatalf("%v %+v", err, p)
	}
	if _, err := f.Fetch(context.Background(), s.URL+"/0"); err == nil || !strings.Contains(err.Error(), "redirected more than 10 times") {
		t.Fatalf("got %v", err)
	}
}

func TestSlowPageTimesOut(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	s := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "start")
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	start := time.Now()
	_, err := New(Options{Rules: rules(t, loopback, nil), Timeout: 300 * time.Millisecond}).Fetch(context.Background(), s.URL)
	if err == nil || err.Error() != "Error: "+s.URL+" did not answer within 300ms (the web_fetch time-out, setting web_fetch_timeout)." {
		t.Fatalf("got %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
}

// The second fetch of a URL within 15 minutes is the cache's; after, the
// server's. No cookie a server sets is sent back, and no credentials.
func TestCacheAndNoCredentials(t *testing.T) {
	var hits atomic.Int64
	var leaked atomic.Value
	s := server(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if h := r.Header.Get("Cookie") + r.Header.Get("Authorization") + r.Header.Get("X-Api-Key"); h != "" {
			leaked.Store(h)
		}
		if r.URL.Path == "/login" {
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "secret"})
			http.Redirect(w, r, "/page", http.StatusFound)
			return
		}
		fmt.Fprint(w, "content")
	})
	now := time.Now()
	f := New(Options{Rules: rules(t, loopback, nil), Now: func() time.Time { return now }})
	for i := range 2 {
		p, err := f.Fetch(context.Background(), s.URL+"/login")
		if err != nil || p.Cached != (i == 1) {
			t.Fatalf("fetch %d: %v %+v", i, err, p)
		}
	}
	if hits.Load() != 2 {
		t.Fatalf("%d requests; want 2 (one fetch, one redirect)", hits.Load())
	}
	now = now.Add(CacheTTL + time.Second)
	if p, err := f.Fetch(context.Background(), s.URL+"/login"); err != nil || p.Cached || hits.Load() != 4 {
		t.Fatalf("after 15 minutes: %v cached %v, %d requests", err, p.Cached, hits.Load())
	}
	if v := leaked.Load(); v != nil {
		t.Fatalf("the server was sent %q", v)
	}
	if _, err := f.Fetch(context.Background(), "http://user:pw@"+strings.TrimPrefix(s.URL, "http://")); err == nil || !strings.Contains(err.Error(), "sends no credentials") {
		t.Fatalf("URL with credentials: %v", err)
	}
}

func TestUpgradeToHTTPS(t *testing.T) {
	f := New(Options{Rules: rules(t, []string{"WebFetch(domain:127.0.0.1)", "WebFetch(domain:docs.python.org)", "WebFetch(domain:*)"}, nil)})
	for in, want := range map[string]string{
		"http://docs.python.org/3/#x":  "https://docs.python.org/3/",
		"http://docs.python.org:80/3/": "https://docs.python.org/3/",
		"http://127.0.0.1:8080/a":      "http://127.0.0.1:8080/a",
		"http://127.0.0.2:8080/a":      "https://127.0.0.2:8080/a",
		"http://localhost/a":           "https://localhost/a",
		"https://example.com/a?b=c":    "https://example.com/a?b=c",
	} {
		u, err := f.target(in)
		if err != nil || u.String() != want {
			t.Errorf("target(%s) = %v %v; want %s", in, u, err, want)
		}
	}
	for _, bad := range []string{"file:///etc/passwd", "ftp://x/", "not a url", "https://"} {
		if _, err := f.target(bad); err == nil {
			t.Errorf("target(%s) accepted", bad)
		}
	}
}
