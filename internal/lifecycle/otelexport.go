package lifecycle

import (
	"context"
	"sync/atomic"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// countingExporter swallows export errors and counts them. The batch
// processor would otherwise hand them to OpenTelemetry's global error
// handler, which prints them (quoting the endpoint URL) to stderr, in the
// middle of a terminal UI. Close reports the count instead.
type countingExporter struct {
	sdktrace.SpanExporter
	failures atomic.Int64
}

func (e *countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if err := e.SpanExporter.ExportSpans(ctx, spans); err != nil {
		e.failures.Add(1)
	}
	return nil
}
