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
// set.endpoint. Why it is not the official otlptracehttp: see doc.go.
// Its errors never quote the endpoint, the headers or the collector's
// reply.
type otlpExporter struct {
	set    otelSettings
	client *http.Client
	retry  retryPolicy
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

const userAgent = "tiny-go OTLP/HTTP trace exporter"

func newOTLPExporter(set otelSettings, client *http.Client, retry retryPolicy) (*otlpExporter, error) {
	// Fail at setup, not on every export, if the URL cannot make a request.
	if _, err := http.NewRequest(http.MethodPost, set.endpoint, http.NoBody); err != nil {
		return nil, errors.New("lifecycle: unusable OTLP endpoint") // err quotes the URL
	}
	done, cancel := context.WithCancel(context.Background())
	return &otlpExporter{set: set, client: client, retry: retry, done: done, shutdown: cancel}, nil
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
	if e.set.gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(body) // writing to a bytes.Buffer cannot fail
		_ = zw.Close()
		body = buf.Bytes()
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
	for attempt := 1; ; attempt++ {
		err := e.post(ctx, body)
		var ee *exportError
		if !errors.As(err, &ee) || !ee.retry {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("lifecycle: OTLP export interrupted: %w", ctx.Err())
		}
		delay := max(e.retry.backoff(attempt-1), ee.after)
		if time.Since(start)+delay > e.retry.budget {
			return fmt.Errorf("lifecycle: OTLP export gave up after %d attempt(s): %w", attempt, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("lifecycle: OTLP export interrupted: %w", ctx.Err())
		case <-time.After(delay):
		}
	}
}

// backoff is the wait before retry number attempt+1: initial growing by
// half each time up to max, then jittered to between half and one and a
// half of that so that clients do not retry in step.
func (p retryPolicy) backoff(attempt int) time.Duration {
	d := float64(p.initial)
	for i := 0; i < attempt && d < float64(p.max); i++ {
		d *= 1.5
	}
	return time.Duration(min(d, float64(p.max)) * (0.5 + rand.Float64()))
}

// post sends one request.
func (e *otlpExporter) post(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.set.endpoint, bytes.NewReader(body))
	if err != nil {
		return errors.New("lifecycle: unusable OTLP endpoint") // err quotes the URL
	}
	req.Header.Set("User-Agent", userAgent)
	for k, v := range e.set.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	if e.set.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		// Retried, refused connections and the client's own timeout
		// included, unless ctx ended it (send checks ctx).
		var t interface{ Timeout() bool }
		if errors.As(err, &t) && t.Timeout() {
			return &exportError{"lifecycle: OTLP request timed out", err, true, 0}
		}
		return &exportError{"lifecycle: OTLP request failed", err, true, 0}
	}
	defer resp.Body.Close()
	// Enough for any partial-success message; draining the rest of a
	// reply this size lets the connection be reused.
	reply, readErr := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	switch code := resp.StatusCode; {
	case code/100 == 2:
		// A broken or unreadable reply to an accepted request is the
		// collector's bug: the export does not fail or repeat for it.
		ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		if readErr != nil || ct != "application/json" {
			return nil // empty, or a protobuf reply we do not read
		}
		if rejected, msg, err := parsePartialSuccess(reply); err == nil && (rejected != 0 || msg != "") {
			return fmt.Errorf("lifecycle: collector rejected %d span(s)", rejected)
		}
		return nil
	case code == http.StatusTooManyRequests, code == http.StatusBadGateway,
		code == http.StatusServiceUnavailable, code == http.StatusGatewayTimeout:
		after := retryAfter(resp.Header.Get("Retry-After"), time.Now())
		return &exportError{fmt.Sprintf("lifecycle: collector answered HTTP %d", code), nil, true, after}
	}
	return fmt.Errorf("lifecycle: collector answered HTTP %d", resp.StatusCode)
}

// exportError is a failed request whose text does not quote its cause
// (which names the endpoint); errors.Is still sees the cause (e.g.
// context.DeadlineExceeded). retry says whether sending again may help,
// after the collector's Retry-After if it gave one.
type exportError struct {
	msg   string
	err   error
	retry bool
	after time.Duration
}

func (e *exportError) Error() string { return e.msg }
func (e *exportError) Unwrap() error { return e.err }

// retryAfter parses a Retry-After value, delay-seconds or an HTTP date
// (RFC 9110 §10.2.3), as the wait from now; 0 if absent or invalid.
func retryAfter(v string, now time.Time) time.Duration {
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		// Anything longer than the retry budget ends the export anyway;
		// the clamp only keeps the multiplication from overflowing.
		return time.Duration(min(max(s, 0), int64(24*time.Hour/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
