package websearch

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// The cost of the tool beyond its backend's own time: BenchmarkToolRun
// minus BenchmarkBackendGet (the same request and body, read and thrown
// away), on loopback (docs/performance.md).
func BenchmarkBackendGet(b *testing.B) {
	srv, _ := searxng(b, 0)
	c := &http.Client{}
	for b.Loop() {
		resp, err := c.Get(srv.URL + "/search?format=json&q=go+1.24+release")
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

func BenchmarkToolRun(b *testing.B) {
	srv, _ := searxng(b, 0)
	tool := &Tool{Backend: &SearXNG{BaseURL: srv.URL, Client: &http.Client{}}}
	args := jsontext.Value(`{"query":"go 1.24 release","blocked_domains":["example.com"]}`)
	for b.Loop() {
		if res := tool.Run(context.Background(), args); res.IsError {
			b.Fatal(res.Content)
		}
	}
}
