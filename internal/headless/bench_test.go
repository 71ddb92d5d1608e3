package headless_test

import (
	"net/http"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// BenchmarkPrintModeFirstRequest is the whole process as a user of
// `tiny-go -p` meets it: from exec to the model request reaching the
// server (first-request metric), and to the exit (ns/op), beside the
// one-shot mode without -p for comparison.
func BenchmarkPrintModeFirstRequest(b *testing.B) {
	for _, c := range []struct {
		name string
		args []string
	}{
		{"print-json", []string{"-p", "--output-format=json", "hi"}},
		{"print-stream", []string{"-p", "--output-format=stream-json", "--verbose", "hi"}},
		{"one-shot", []string{"hi"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var mu sync.Mutex
			var arrived time.Time
			srv := providertest.New(b)
			link := selfLinkTB(b)
			dir := b.TempDir()
			var first time.Duration
			for b.Loop() {
				srv.Enqueue(providertest.Reply{Handler: func(w http.ResponseWriter, r *http.Request) {
					mu.Lock()
					arrived = time.Now()
					mu.Unlock()
					w.Header().Set("Content-Type", "text/event-stream")
					_, _ = w.Write([]byte("data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"))
				}})
				cmd := exec.Command(link, c.args...)
				cmd.Dir, cmd.Env = dir, env(srv.URL())
				began := time.Now()
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("%v: %s", err, out)
				}
				mu.Lock()
				first += arrived.Sub(began)
				mu.Unlock()
			}
			b.ReportMetric(float64(first.Microseconds())/float64(b.N)/1000, "ms-to-first-request")
		})
	}
}
