package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/session/sessiontest"
	"github.com/tiny-agent/tiny-go/internal/store/storetest"
)

// The budgets users feel (docs/performance.md, "Budgets"), measured on the
// real binary as a user starts it. They are figures, not assertions: each
// benchmark reports the median of its iterations in ms.
//
//	go test -run '^$' -bench Budget -benchtime 30x ./cmd/tiny-go

// buildBinary builds tiny-go once per benchmark into a temporary folder.
func buildBinary(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "tiny-go")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// firstRequestServer answers every chat request with a one-word answer and
// reports the time each request arrived.
func firstRequestServer(b *testing.B) (url string, arrived <-chan time.Time) {
	ch := make(chan time.Time, 16)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ch <- time.Now()
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`+"\n\n")
		io.WriteString(w, `data: {"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1}}`+"\n\ndata: [DONE]\n\n")
	})}
	go srv.Serve(l)
	b.Cleanup(func() { srv.Close() })
	return "http://" + l.Addr().String() + "/v1", ch
}

func budgetEnv(endpoint string) []string {
	return append(os.Environ(), "OPENROUTER_API_KEY=k", "OTEL_SDK_DISABLED=true", "TINY_ENDPOINT="+endpoint, "HOME="+os.TempDir())
}

func reportMedian(b *testing.B, name string, ds []time.Duration) {
	slices.Sort(ds)
	b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, name)
	b.ReportMetric(float64(ds[len(ds)*9/10].Microseconds())/1000, name[:len(name)-3]+"-p90-ms")
}

// One-shot: exec to the first model request (budget 40 ms).
func BenchmarkBudgetFirstRequest(b *testing.B) {
	bin := buildBinary(b)
	url, arrived := firstRequestServer(b)
	var ds []time.Duration
	for b.Loop() {
		dir := b.TempDir()
		cmd := exec.Command(bin, "--cwd", dir, "say ok")
		cmd.Env = budgetEnv(url)
		for len(arrived) > 0 {
			<-arrived
		}
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, (<-arrived).Sub(start))
		if err := cmd.Wait(); err != nil {
			b.Fatal(err)
		}
	}
	reportMedian(b, "first-request-ms", ds)
}

// Interactive: exec to the prompt drawn in a terminal (budget 60 ms). The
// terminal is script(1)'s pty; the prompt is ready when the input line is
// drawn and the cursor shown in it (the first frame), the banner when its
// last line is on the screen.
func BenchmarkBudgetPromptReady(b *testing.B) {
	if _, err := exec.LookPath("script"); err != nil {
		b.Skip("script(1) is not installed")
	}
	bin := buildBinary(b)
	url, _ := firstRequestServer(b)
	var ds, banner []time.Duration
	for b.Loop() {
		dir := b.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		cmd := exec.CommandContext(ctx, "script", "-qfc", bin+" --cwd "+dir, "/dev/null")
		cmd.Env = append(budgetEnv(url), "TERM=xterm-256color", "COLUMNS=100", "LINES=30")
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		br := bufio.NewReader(out)
		if !waitFor(br, "\x1b[?25h") {
			b.Fatal("no prompt")
		}
		ds = append(ds, time.Since(start))
		if !waitFor(br, "/help") {
			b.Fatal("no banner")
		}
		banner = append(banner, time.Since(start))
		cancel()
		_ = cmd.Wait()
	}
	reportMedian(b, "prompt-ready-ms", ds)
	reportMedian(b, "banner-ms", banner)
}

// waitFor reads r until want has been seen (the banner's command line is
// drawn with the input, in the same frame).
func waitFor(br *bufio.Reader, want string) bool {
	var seen []byte
	buf := make([]byte, 4096)
	for {
		n, err := br.Read(buf)
		seen = append(seen, buf[:n]...)
		if bytes.Contains(seen, []byte(want)) {
			return true
		}
		if err != nil {
			return false
		}
	}
}

// `tiny-go session state` on a 1 MB session (budget 20 ms).
func BenchmarkBudgetSessionState(b *testing.B) {
	bin := buildBinary(b)
	data := sessiontest.Generate(sessiontest.Options{Facts: 1000, Seed: 3})
	for facts := 1500; len(data) < 1<<20; facts += 500 {
		data = sessiontest.Generate(sessiontest.Options{Facts: facts, Seed: 3})
	}
	cwd, id := storetest.InstallSession(b, writeTemp(b, data))
	b.ReportMetric(float64(len(data))/1e6, "MB")
	var ds []time.Duration
	for b.Loop() {
		cmd := exec.Command(bin, "--cwd", cwd, "session", "state", id)
		cmd.Stdout = io.Discard
		var stderr strings.Builder
		cmd.Stderr = &stderr
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("session state: %v\n%s", err, stderr.String())
		}
		ds = append(ds, time.Since(start))
	}
	reportMedian(b, "state-ms", ds)
}

func writeTemp(b *testing.B, data []byte) string {
	p := filepath.Join(b.TempDir(), "s.jsonl")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		b.Fatal(err)
	}
	return p
}
