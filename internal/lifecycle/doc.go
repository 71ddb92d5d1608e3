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
// The OTLP/HTTP exporter (otlp.go) sends OTLP's JSON
// encoding, which the protocol allows (application/json) and every
// OTLP/HTTP receiver accepts, from plain structs the JSON library writes.
// The official otlptracehttp links gRPC, the protobuf runtime and
// registry and the generated OTLP types (about 140 packages, 0.7 to
// 1.2 ms of init at every start: docs/performance.md §12), and protobuf's
// wire format would have to be written by hand to avoid them. The tests
// decode what is sent with the official generated types (protojson), so
// a move to an official JSON exporter would carry them over.
// cmd/tiny-go's linked_test.go keeps those packages out of the binary.
package lifecycle
