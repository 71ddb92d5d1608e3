package lifecycle

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net/http"
	"strconv"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// otlpExporter is a sdktrace.SpanExporter that POSTs each batch as an
// OTLP/HTTP JSON ExportTraceServiceRequest (encoded in otlpjson.go) to
// one URL. Why it is not the official otlptracehttp: see doc.go.
//
// Its errors never quote the endpoint or the collector's reply.
type otlpExporter struct {
	url     string
	headers map[string]string // set on every request; never logged
	gzip    bool
	client  *http.Client
	retry   retryPolicy

	// done is cancelled by Shutdown and interrupts requests in flight.
	done     context.Context
	shutdown context.CancelFunc
}

// retryPolicy says when a failed request is sent again: after a 429, 502,
// 503 or 504 answer or a failed connection, with exponential backoff (and
// jitter) or the Retry-After the collector asked for, whichever is longer,
// as long as the next attempt starts within budget of the first.
type retryPolicy struct {
	initial, max time.Duration // backoff before jitter
	budget       time.Duration
}

// maxResponseBody bounds how much of a reply is read: enough for any
// partial-success message, and draining it lets the connection be reused.
const maxResponseBody = 64 << 10

const userAgent = "tiny-go OTLP/HTTP trace exporter"

func newOTLPExporter(set otelSettings, client *http.Client, retry retryPolicy) (*otlpExporter, error) {
	// Fail at setup, not on every export, if the URL cannot make a request.
	if _, err := http.NewRequest(http.MethodPost, set.endpoint, http.NoBody); err != nil {
		return nil, errors.New("lifecycle: unusable OTLP endpoint") // err quotes the URL
	}
	done, cancel := context.WithCancel(context.Background())
	return &otlpExporter{
		url:      set.endpoint,
		headers:  set.headers,
		gzip:     set.gzip,
		client:   client,
		retry:    retry,
		done:     done,
		shutdown: cancel,
	}, nil
}

// ExportSpans sends spans in one request, retrying as retryPolicy says,
// until ctx or Shutdown ends it.
func (e *otlpExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	if e.done.Err() != nil {
		return errors.New("lifecycle: OTLP exporter is shut down")
	}
	body := encodeTraces(spans)
	if e.gzip {
		var err error
		if body, err = gzipped(body); err != nil {
			return fmt.Errorf("lifecycle: compressing traces: %w", err)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(e.done, cancel)()
	return e.send(ctx, body)
}

// Shutdown interrupts requests in flight and refuses later exports. The
// batch processor flushes before it calls Shutdown.
func (e *otlpExporter) Shutdown(context.Context) error {
	e.shutdown()
	e.client.CloseIdleConnections()
	return nil
}

func (e *otlpExporter) send(ctx context.Context, body []byte) error {
	start := time.Now()
	for attempt := 0; ; attempt++ {
		err := e.post(ctx, body)
		var re *retryableError
		if err == nil || !errors.As(err, &re) {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("lifecycle: OTLP export interrupted: %w", ctx.Err())
		}
		delay := max(e.retry.backoff(attempt), re.after)
		if time.Since(start)+delay > e.retry.budget {
			return fmt.Errorf("lifecycle: OTLP export gave up after %d attempt(s): %w", attempt+1, err)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("lifecycle: OTLP export interrupted: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// backoff is the wait before retry number attempt+1: initial growing by
// half each time up to max, then jittered to between half and one and a
// half of that so that clients do not retry in step.
func (p retryPolicy) backoff(attempt int) time.Duration {
	d := float64(p.initial)
	for range attempt {
		d *= 1.5
		if d >= float64(p.max) {
			break
		}
	}
	d = min(d, float64(p.max))
	return time.Duration(d * (0.5 + rand.Float64()))
}

// post sends one request. Failures worth retrying are *retryableError.
func (e *otlpExporter) post(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return errors.New("lifecycle: unusable OTLP endpoint") // err quotes the URL
	}
	req.Header.Set("User-Agent", userAgent)
	for k, v := range e.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	if e.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		// A cancelled or expired ctx is not retried (send checks ctx);
		// anything else, refused connections and the client's own
		// timeout included, is.
		return &retryableError{err: requestError{err}}
	}
	defer resp.Body.Close()
	reply, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	if err != nil && resp.StatusCode/100 == 2 {
		// The collector accepted the request; a broken reply does not
		// make the export fail or repeat.
		return nil
	}
	switch code := resp.StatusCode; {
	case code/100 == 2:
		ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		if ct != "application/json" {
			return nil // empty, or a protobuf reply we do not read
		}
		rejected, msg, err := parsePartialSuccess(reply)
		if err != nil {
			return nil // as above: accepted, the reply is the collector's bug
		}
		if rejected != 0 || msg != "" {
			return fmt.Errorf("lifecycle: collector rejected %d span(s)", rejected)
		}
		return nil
	case code == http.StatusTooManyRequests, code == http.StatusBadGateway,
		code == http.StatusServiceUnavailable, code == http.StatusGatewayTimeout:
		return &retryableError{
			after: retryAfter(resp.Header.Get("Retry-After"), time.Now()),
			err:   fmt.Errorf("lifecycle: collector answered HTTP %d", code),
		}
	default:
		return fmt.Errorf("lifecycle: collector answered HTTP %d", code)
	}
}

type retryableError struct {
	after time.Duration // the collector's Retry-After, or 0
	err   error
}

func (e *retryableError) Error() string { return e.err.Error() }
func (e *retryableError) Unwrap() error { return e.err }

// requestError is a request that got no answer. Its text says what kind
// of failure it was but not the error itself, which names the endpoint;
// errors.Is still sees the cause (e.g. context.DeadlineExceeded).
type requestError struct{ err error }

func (e requestError) Error() string {
	var t interface{ Timeout() bool }
	if errors.As(e.err, &t) && t.Timeout() {
		return "lifecycle: OTLP request timed out"
	}
	return "lifecycle: OTLP request failed"
}

func (e requestError) Unwrap() error { return e.err }

// retryAfter parses a Retry-After value, delay-seconds or an HTTP date
// (RFC 9110 §10.2.3), as the wait from now; 0 if absent or invalid.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s <= 0 {
			return 0
		}
		// Anything longer than the retry budget ends the export anyway;
		// the clamp only keeps the multiplication from overflowing.
		return time.Duration(min(s, int64(24*time.Hour/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

func gzipped(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
