package webfetch

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchPage is a documentation page: navigation, then sections of prose
// with links, a code block and a table each (20 sections: 20 KB).
func benchPage(sections int) string {
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><title>Reference</title><style>body{}</style></head><body><nav>`)
	for i := range 40 {
		fmt.Fprintf(&b, `<a href="/p%d">Page %d</a> `, i, i)
	}
	b.WriteString(`</nav><main><h1>Reference</h1>`)
	for i := range sections {
		fmt.Fprintf(&b, `<h2 id="s%d">Section %d</h2>`, i, i)
		for range 4 {
			fmt.Fprintf(&b, `<p>The <code>Widget</code> type holds <em>state</em> for a <a href="/types#w%d">widget</a>; `+
				`its methods are safe for concurrent use unless the documentation says otherwise.</p>`, i)
		}
		fmt.Fprintf(&b, "<pre><code class=\"language-go\">w := widget.New(%d)\nif err := w.Run(ctx); err != nil {\n\treturn err\n}\n</code></pre>", i)
		b.WriteString(`<table><tr><th>option</th><th>default</th></tr><tr><td>size</td><td>16</td></tr><tr><td>name</td><td>""</td></tr></table>`)
	}
	b.WriteString(`</main><footer>footer</footer></body></html>`)
	return b.String()
}

// BenchmarkFetch measures a fetch of a 60 KB page from a loopback server
// as a plain HTTP GET (the server's own time and the transport's) and as
// web_fetch (guarded dial, rules, conversion to Markdown, formatting),
// each URL new so the cache never answers. The difference is the time
// web_fetch adds per fetch (docs/performance.md).
func BenchmarkFetch(b *testing.B) {
	for _, sections := range []int{20, 200} {
		page := benchPage(sections)
		b.Run(fmt.Sprintf("%dKB", len(page)>>10), func(b *testing.B) { benchFetch(b, page) })
	}
}

// cpuTime is this process's user and system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loop runs op b.N times and reports the CPU time per op as well (the
// machine is shared: wall time also measures the neighbours).
func loop(b *testing.B, op func(i int)) {
	start := cpuTime(b)
	i := 0
	for b.Loop() {
		op(i)
		i++
	}
	b.ReportMetric(float64(cpuTime(b)-start)/float64(time.Millisecond)/float64(i), "cpu-ms/op")
}

func benchFetch(b *testing.B, page string) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	}))
	defer s.Close()
	b.Run("plain-get", func(b *testing.B) {
		c := &http.Client{}
		loop(b, func(i int) {
			resp, err := c.Get(fmt.Sprintf("%s/doc?i=%d", s.URL, i))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.ReadAll(resp.Body); err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
		})
	})
	b.Run("web_fetch", func(b *testing.B) {
		f := New(Options{Rules: rules(b, loopback, nil)})
		loop(b, func(i int) {
			p, err := f.Fetch(context.Background(), fmt.Sprintf("%s/doc?i=%d", s.URL, i))
			if err != nil {
				b.Fatal(err)
			}
			if len(Format(p, "")) < 10_000 {
				b.Fatal("short page")
			}
		})
	})
	b.Run("cached", func(b *testing.B) {
		f := New(Options{Rules: rules(b, loopback, nil)})
		loop(b, func(int) {
			p, err := f.Fetch(context.Background(), s.URL+"/doc")
			if err != nil {
				b.Fatal(err)
			}
			_ = Format(p, "")
		})
	})
}
