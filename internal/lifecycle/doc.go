// Package lifecycle projects committed session facts and live observations
// into lifecycle events (events.md) and delivers them to sinks: JSON Lines
// for --json, OpenTelemetry traces, or both.
//
// Wire format choices that events.md leaves open:
//
//   - Every event is one JSON object whose first member is "type" (the
//     event name, e.g. "operation.started") and whose second is "timestamp".
//     The remaining members follow the order of the events.md table.
//   - "timestamp" is RFC 3339 in UTC with exactly three fractional digits,
//     e.g. "2026-01-02T15:04:05.123Z" (see TimestampLayout).
//   - "cacheHitRate" is cacheRead/(input+cacheRead+cacheWrite)*100 rounded
//     half away from zero to two decimals; 0 when the denominator is 0.
//   - Optional members (marked ? in events.md) are omitted when empty.
//
// Events never carry prompts, tool arguments or tool results. The final
// answer and the error message of operation.completed are JSON-only: the
// OpenTelemetry sink never exports them.
//
// Sinks never fail the caller: a failing writer or collector is remembered
// or dropped, never returned into an operation's result.
//
// The OTLP/HTTP exporter (otlpexport.go, otlpencode.go, otlpwire.go) is
// written here instead of using go.opentelemetry.io/otel/exporters/otlp/
// otlptrace/otlptracehttp. The official exporter links about 140 packages
// (gRPC, the protobuf registry, the generated OTLP types, grpc-gateway,
// golang.org/x/net/trace), and Go initialises every linked package at each
// start of tiny-go, --help included: 0.7 to 1.2 ms of a 5.7 to 7 ms start
// (docs/performance.md §12). Even protowire is avoided, as it links the
// protobuf module's detrand, which hashes the executable at init. The
// exporter sends protobuf only, which every OTLP/HTTP receiver accepts.
// Should upstream ever offer an OTLP/HTTP exporter free of the protobuf
// runtime and gRPC, go back to it: the tests here decode with the official
// types and would carry over. cmd/tiny-go's linked_test.go keeps those
// packages out of the binary.
package lifecycle
