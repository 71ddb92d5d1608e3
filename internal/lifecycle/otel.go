package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// TracerName is the instrumentation scope of every span.
const TracerName = "tiny-agent"

// DefaultOTelTimeout bounds each export (retries included) and Close.
const DefaultOTelTimeout = 5 * time.Second

// OTelConfig configures NewOTel.
type OTelConfig struct {
	// Getenv reads OTEL_* variables (os.Getenv in main). Nil means an
	// empty environment, i.e. tracing off.
	Getenv func(string) string
	// Timeout bounds each export request, the retries of one export
	// together, and Close; 0 means DefaultOTelTimeout.
	Timeout time.Duration
}

// NewOTel returns the OpenTelemetry sink of events.md, or Nop when the
// environment does not enable tracing (see OTelEnabled). On a configuration
// error it returns Nop and the error: tracing is optional, so the caller
// should warn and go on.
//
// The sink turns the event stream into spans (see otelspans.go) exported
// over OTLP/HTTP JSON by a batch processor. Close ends spans still open
// with outcome effect_unknown and flushes within the timeout.
//
// Endpoint, headers, compression and service name come from Getenv only.
// The OpenTelemetry SDK itself still merges OTEL_RESOURCE_ATTRIBUTES from
// the process environment into the resource (our service attributes win).
func NewOTel(ctx context.Context, cfg OTelConfig) (Sink, error) {
	if !OTelEnabled(cfg.Getenv) {
		return Nop{}, nil
	}
	set, err := readOTelSettings(cfg.Getenv)
	if err != nil {
		return Nop{}, fmt.Errorf("tracing disabled: %w", err)
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultOTelTimeout
	}
	// Setup does no I/O; ctx only stops it from starting.
	if err := ctx.Err(); err != nil {
		return Nop{}, fmt.Errorf("tracing disabled: %w", err)
	}
	exp, err := newExporter(set, timeout)
	if err != nil {
		return Nop{}, fmt.Errorf("tracing disabled: %w", err)
	}
	return newOTelSink(newTracerProvider(exp, set, timeout), exp, timeout), nil
}

func newExporter(set otelSettings, timeout time.Duration) (*countingExporter, error) {
	transport := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        2,
		IdleConnTimeout:     30 * time.Second,
		TLSHandshakeTimeout: timeout,
	}
	exp, err := newOTLPExporter(set, &http.Client{Transport: transport, Timeout: timeout}, retryPolicy{
		initial: 250 * time.Millisecond,
		max:     time.Second,
		budget:  timeout,
	})
	if err != nil {
		// Not wrapped: keep the message the same whatever the cause.
		return nil, errors.New("cannot create the OTLP/HTTP trace exporter")
	}
	return &countingExporter{SpanExporter: exp}, nil
}

func newTracerProvider(exp sdktrace.SpanExporter, set otelSettings, timeout time.Duration) *sdktrace.TracerProvider {
	res := resource.NewSchemaless(
		attribute.String("service.name", set.serviceName),
		attribute.String("openinference.project.name", set.serviceName),
	)
	bsp := sdktrace.NewBatchSpanProcessor(exp,
		sdktrace.WithBatchTimeout(2*time.Second),
		sdktrace.WithExportTimeout(timeout),
		sdktrace.WithMaxQueueSize(sdktrace.DefaultMaxQueueSize),
		sdktrace.WithMaxExportBatchSize(sdktrace.DefaultMaxExportBatchSize),
	)
	return sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		sdktrace.WithRawSpanLimits(sdktrace.SpanLimits{
			AttributeValueLengthLimit:   1024,
			AttributeCountLimit:         sdktrace.DefaultAttributeCountLimit,
			EventCountLimit:             sdktrace.DefaultEventCountLimit,
			LinkCountLimit:              sdktrace.DefaultLinkCountLimit,
			AttributePerEventCountLimit: sdktrace.DefaultAttributePerEventCountLimit,
			AttributePerLinkCountLimit:  sdktrace.DefaultAttributePerLinkCountLimit,
		}),
		sdktrace.WithSpanProcessor(bsp),
	)
}

// otelSink builds spans from events. All span state is guarded by mu;
// exporting happens on the batch processor's goroutine, so Emit never
// waits for the collector.
type otelSink struct {
	tp      *sdktrace.TracerProvider
	exp     *countingExporter
	tracer  trace.Tracer
	timeout time.Duration

	mu     sync.Mutex
	closed bool
	spans  spanState
}

func newOTelSink(tp *sdktrace.TracerProvider, exp *countingExporter, timeout time.Duration) *otelSink {
	s := &otelSink{tp: tp, exp: exp, tracer: tp.Tracer(TracerName), timeout: timeout}
	s.spans.init(s.tracer)
	return s
}

func (s *otelSink) Emit(e Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.spans.apply(e)
	}
}

// Close ends open spans as effect_unknown and flushes, bounded by the
// sink's timeout and ctx. A timeout is reported as context.DeadlineExceeded;
// failed exports only by their count, since their text can quote the
// endpoint.
func (s *otelSink) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.spans.endAll(now())
	s.mu.Unlock()

	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if err := s.tp.Shutdown(ctx); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("lifecycle: trace flush: %w", ctx.Err())
		}
		return errors.New("lifecycle: trace flush failed")
	}
	if n := s.exp.failures.Load(); n > 0 {
		return fmt.Errorf("lifecycle: %d trace export(s) failed", n)
	}
	return nil
}
