package lifecycle

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// scriptedCollector answers the n-th request with replies[n] (the last one
// repeats) and records what it received.
type scriptedCollector struct {
	srv *httptest.Server

	mu      sync.Mutex
	bodies  [][]byte // as received (still compressed)
	headers []http.Header
	times   []time.Time
}

type reply struct {
	status int
	header map[string]string
	body   []byte
	hangup bool // close the connection without answering
	hang   bool // wait until the client gives up
}

func newScriptedCollector(t *testing.T, replies ...reply) *scriptedCollector {
	t.Helper()
	c := &scriptedCollector{}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		n := len(c.bodies)
		c.bodies = append(c.bodies, body)
		c.headers = append(c.headers, r.Header.Clone())
		c.times = append(c.times, time.Now())
		c.mu.Unlock()
		rp := replies[min(n, len(replies)-1)]
		switch {
		case rp.hang:
			<-r.Context().Done()
			return
		case rp.hangup:
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		for k, v := range rp.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(rp.status)
		w.Write(rp.body)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *scriptedCollector) requests() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.bodies)
}

func testExporter(t *testing.T, set otelSettings, clientTimeout time.Duration, retry retryPolicy) *otlpExporter {
	t.Helper()
	e, err := newOTLPExporter(set, &http.Client{Timeout: clientTimeout}, retry)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Shutdown(context.Background()) })
	return e
}

func testSpans() []sdktrace.ReadOnlySpan {
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}})
	s := tracetest.SpanStub{Name: "op", SpanContext: sc, StartTime: time.Unix(1, 0), EndTime: time.Unix(2, 0),
		Attributes: []attribute.KeyValue{attribute.String("k", "v")},
		Resource:   resource.NewSchemaless(attribute.String("service.name", "t"))}
	return []sdktrace.ReadOnlySpan{s.Snapshot()}
}

var fastRetry = retryPolicy{initial: 5 * time.Millisecond, max: 20 * time.Millisecond, budget: 5 * time.Second}

func TestOTLPExporterRequest(t *testing.T) {
	for _, gz := range []bool{false, true} {
		c := newScriptedCollector(t, reply{status: 200})
		e := testExporter(t, otelSettings{endpoint: c.srv.URL + "/v1/traces", gzip: gz,
			headers: map[string]string{"Authorization": "Bearer x", "X-Tenant": "t1"}}, 5*time.Second, fastRetry)
		spans := testSpans()
		if err := e.ExportSpans(context.Background(), spans); err != nil {
			t.Fatal(err)
		}
		if c.requests() != 1 {
			t.Fatalf("gzip=%v: %d requests", gz, c.requests())
		}
		h, body := c.headers[0], c.bodies[0]
		if gz {
			if h.Get("Content-Encoding") != "gzip" {
				t.Errorf("Content-Encoding %q", h.Get("Content-Encoding"))
			}
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if body, err = io.ReadAll(zr); err != nil {
				t.Fatal(err)
			}
		} else if h.Get("Content-Encoding") != "" {
			t.Errorf("Content-Encoding %q without gzip", h.Get("Content-Encoding"))
		}
		for k, want := range map[string]string{"Content-Type": "application/json", "Authorization": "Bearer x", "X-Tenant": "t1", "User-Agent": userAgent} {
			if got := h.Get(k); got != want {
				t.Errorf("gzip=%v: %s = %q, want %q", gz, k, got, want)
			}
		}
		if !bytes.Equal(body, encodeTraces(spans)) {
			t.Errorf("gzip=%v: body is not the encoded request", gz)
		}
		req, err := decodeOTLP(body)
		if err != nil || req.GetResourceSpans()[0].GetScopeSpans()[0].GetSpans()[0].GetName() != "op" {
			t.Errorf("gzip=%v: decoded %v, %v", gz, req, err)
		}
	}
}

func TestOTLPExporterRetriesWithRetryAfter(t *testing.T) {
	c := newScriptedCollector(t, reply{status: 503, header: map[string]string{"Retry-After": "1"}}, reply{status: 200})
	e := testExporter(t, otelSettings{endpoint: c.srv.URL}, 5*time.Second, fastRetry)
	if err := e.ExportSpans(context.Background(), testSpans()); err != nil {
		t.Fatal(err)
	}
	if c.requests() != 2 {
		t.Fatalf("%d requests, want 2", c.requests())
	}
	// The backoff alone would have waited at most 7.5ms.
	if gap := c.times[1].Sub(c.times[0]); gap < 900*time.Millisecond {
		t.Errorf("retried after %v, want the collector's Retry-After of 1s", gap)
	}
	if !bytes.Equal(c.bodies[0], c.bodies[1]) {
		t.Error("the retry sent a different body")
	}
}

func TestOTLPExporterRetryableAnswers(t *testing.T) {
	for _, code := range []int{429, 502, 503, 504} {
		c := newScriptedCollector(t, reply{status: code}, reply{status: code}, reply{status: 200})
		e := testExporter(t, otelSettings{endpoint: c.srv.URL}, 5*time.Second, fastRetry)
		if err := e.ExportSpans(context.Background(), testSpans()); err != nil {
			t.Errorf("%d: %v", code, err)
		}
		if c.requests() != 3 {
			t.Errorf("%d: %d requests, want 3", code, c.requests())
		}
	}
}

func TestOTLPExporterRetriesDroppedConnection(t *testing.T) {
	c := newScriptedCollector(t, reply{hangup: true}, reply{status: 200})
	e := testExporter(t, otelSettings{endpoint: c.srv.URL}, 5*time.Second, fastRetry)
	if err := e.ExportSpans(context.Background(), testSpans()); err != nil {
		t.Fatal(err)
	}
	if c.requests() != 2 {
		t.Errorf("%d requests, want 2", c.requests())
	}
}

func TestOTLPExporterDoesNotRetryClientErrors(t *testing.T) {
	for _, code := range []int{400, 401, 404, 413, 500} {
		c := newScriptedCollector(t, reply{status: code, body: []byte("bad request from 127.0.0.1")})
		e := testExporter(t, otelSettings{endpoint: c.srv.URL}, 5*time.Second, fastRetry)
		err := e.ExportSpans(context.Background(), testSpans())
		if err == nil {
			t.Errorf("%d: no error", code)
			continue
		}
		if c.requests() != 1 {
			t.Errorf("%d: %d requests, want 1", code, c.requests())
		}
		if strings.Contains(err.Error(), "127.0.0.1") || strings.Contains(err.Error(), "bad ") {
			t.Errorf("%d: error quotes the endpoint or the reply: %v", code, err)
		}
	}
}

func TestOTLPExporterRetryAfterBeyondBudgetGivesUp(t *testing.T) {
	c := newScriptedCollector(t, reply{status: 429, header: map[string]string{"Retry-After": "30"}})
	e := testExporter(t, otelSettings{endpoint: c.srv.URL}, time.Second, retryPolicy{initial: 5 * time.Millisecond, max: 20 * time.Millisecond, budget: time.Second})
	begin := time.Now()
	err := e.ExportSpans(context.Background(), testSpans())
	if err == nil || !strings.Contains(err.Error(), "gave up after 1 attempt") {
		t.Errorf("err = %v, want giving up at once", err)
	}
	if d := time.Since(begin); d > 500*time.Millisecond {
		t.Errorf("took %v; waiting cannot help, so it should not wait", d)
	}
}

func TestOTLPExporterTimeouts(t *testing.T) {
	c := newScriptedCollector(t, reply{hang: true})

	// The client's per-request timeout, then the retry budget, end it.
	e := testExporter(t, otelSettings{endpoint: c.srv.URL}, 200*time.Millisecond,
		retryPolicy{initial: 5 * time.Millisecond, max: 20 * time.Millisecond, budget: 300 * time.Millisecond})
	begin := time.Now()
	err := e.ExportSpans(context.Background(), testSpans())
	if d := time.Since(begin); d > 2*time.Second {
		t.Errorf("export took %v, want about 400ms", d)
	}
	if err == nil || !strings.Contains(err.Error(), "timed out") || strings.Contains(err.Error(), "127.0.0.1") {
		t.Errorf("err = %v, want a timeout that does not quote the endpoint", err)
	}

	// The caller's deadline ends it too, and is what the error wraps.
	e = testExporter(t, otelSettings{endpoint: c.srv.URL}, time.Minute, retryPolicy{initial: time.Second, max: time.Second, budget: time.Minute})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	begin = time.Now()
	err = e.ExportSpans(ctx, testSpans())
	if d := time.Since(begin); d > 2*time.Second {
		t.Errorf("export took %v despite a 200ms deadline", d)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want context.DeadlineExceeded", err)
	}
}

func TestOTLPExporterShutdownInterrupts(t *testing.T) {
	c := newScriptedCollector(t, reply{hang: true})
	e := testExporter(t, otelSettings{endpoint: c.srv.URL}, time.Minute, retryPolicy{initial: time.Second, max: time.Second, budget: time.Minute})
	done := make(chan error, 1)
	go func() { done <- e.ExportSpans(context.Background(), testSpans()) }()
	for c.requests() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	if err := e.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Error("interrupted export reported success")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Shutdown did not interrupt the export")
	}
	if err := e.ExportSpans(context.Background(), testSpans()); err == nil {
		t.Error("export after Shutdown succeeded")
	}
	if n := c.requests(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestOTLPExporterPartialSuccess(t *testing.T) {
	partial, _ := protojson.Marshal(&coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{RejectedSpans: 2, ErrorMessage: "from 127.0.0.1"}})
	empty, _ := protojson.Marshal(&coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{}})
	js := map[string]string{"Content-Type": "application/json"}
	for _, tc := range []struct {
		name  string
		reply reply
		fail  bool
	}{
		{"rejected spans", reply{status: 200, header: js, body: partial}, true},
		{"rejected spans as a number", reply{status: 200, header: js, body: []byte(`{"partialSuccess":{"rejectedSpans":2}}`)}, true},
		{"empty partial success", reply{status: 200, header: js, body: empty}, false},
		{"no body", reply{status: 200}, false},
		{"protobuf reply", reply{status: 200, header: map[string]string{"Content-Type": "application/x-protobuf"}, body: []byte{0x0a, 0x02, 0x08, 0x02}}, false},
		{"garbage JSON", reply{status: 202, header: js, body: []byte{0xff}}, false},
	} {
		c := newScriptedCollector(t, tc.reply)
		e := testExporter(t, otelSettings{endpoint: c.srv.URL}, 5*time.Second, fastRetry)
		err := e.ExportSpans(context.Background(), testSpans())
		if (err != nil) != tc.fail {
			t.Errorf("%s: err = %v, want failure %v", tc.name, err, tc.fail)
		}
		if err != nil && strings.Contains(err.Error(), "127.0.0.1") {
			t.Errorf("%s: error quotes the collector's message: %v", tc.name, err)
		}
		if c.requests() != 1 {
			t.Errorf("%s: %d requests", tc.name, c.requests())
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"":                              0,
		"0":                             0,
		"-3":                            0,
		"2":                             2 * time.Second,
		"99999999999999999":             24 * time.Hour,
		"soon":                          0,
		"Fri, 02 Jan 2026 03:04:15 GMT": 10 * time.Second,
		"Fri, 02 Jan 2026 03:04:00 GMT": 0, // in the past
	} {
		if got := retryAfter(v, now); got != want {
			t.Errorf("retryAfter(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestBackoffBounds(t *testing.T) {
	p := retryPolicy{initial: 250 * time.Millisecond, max: time.Second}
	for range 100 {
		if d := p.backoff(0); d < 125*time.Millisecond || d >= 375*time.Millisecond {
			t.Fatalf("first backoff %v", d)
		}
		if d := p.backoff(1); d < 187*time.Millisecond || d >= 563*time.Millisecond {
			t.Fatalf("second backoff %v", d)
		}
		if d := p.backoff(50); d < 500*time.Millisecond || d >= 1500*time.Millisecond {
			t.Fatalf("late backoff %v", d)
		}
	}
}
