package lifecycle

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// FuzzParsePartialSuccess compares parsePartialSuccess with the official
// types' JSON reader: whatever protojson accepts, parsePartialSuccess
// reads the same rejectedSpans and errorMessage from. It never panics.
func FuzzParsePartialSuccess(f *testing.F) {
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"partialSuccess":{}}`))
	f.Add([]byte(`{"partialSuccess":{"rejectedSpans":"3","errorMessage":"too big"}}`))
	f.Add([]byte(`{"partialSuccess":{"rejectedSpans":-1}}`))
	f.Add([]byte(`{"partialSuccess":{"rejectedSpans":"5"},"unknown":[1,{"a":null}]}`))
	f.Add([]byte(`{"partialSuccess":null}`))
	f.Add([]byte(`{"partialSuccess":{"rejectedSpans":1e2}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rejected, msg, err := parsePartialSuccess(b)
		var want coltracepb.ExportTraceServiceResponse
		if (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(b, &want) != nil {
			return
		}
		if err != nil {
			t.Skipf("protojson accepts what we do not read (%v): the export is then taken as accepted", err)
		}
		if rejected != want.GetPartialSuccess().GetRejectedSpans() || msg != want.GetPartialSuccess().GetErrorMessage() {
			t.Fatalf("read (%d, %q), protojson (%d, %q)", rejected, msg,
				want.GetPartialSuccess().GetRejectedSpans(), want.GetPartialSuccess().GetErrorMessage())
		}
	})
}

// FuzzEncodeTraces: whatever a span holds, the official types read back
// the same name and attribute values from encodeTraces' output.
func FuzzEncodeTraces(f *testing.F) {
	f.Add("op", "key", "value", int64(-1), 1.5, true, []byte{0}, 3)
	f.Add("", "", "", int64(0), 0.0, false, []byte{}, 0)
	f.Add(strings.Repeat("n", 300), "k", strings.Repeat("v", 20000), int64(math.MinInt64), math.Inf(-1), true, []byte(nil), 200)
	f.Fuzz(func(t *testing.T, name, key, val string, i int64, fl float64, b bool, raw []byte, n int) {
		if !utf8.ValidString(name) || !utf8.ValidString(key) || !utf8.ValidString(val) {
			t.Skip("protobuf strings are UTF-8")
		}
		n = min(max(n, 0), 300) // slice length
		strs := make([]string, n)
		for j := range strs {
			strs[j] = val
		}
		s := tracetest.SpanStub{
			Name:        name,
			SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}}),
			Attributes: []attribute.KeyValue{
				attribute.String(key, val), attribute.Int64("i", i), attribute.Float64("f", fl),
				attribute.Bool("b", b), attribute.ByteSlice("raw", raw), attribute.StringSlice("ss", strs),
			},
			Events: []sdktrace.Event{{Name: name, Attributes: []attribute.KeyValue{attribute.String(key, val)}}},
		}
		req, err := decodeOTLP(encodeTraces([]sdktrace.ReadOnlySpan{s.Snapshot()}))
		if err != nil {
			t.Fatal(err)
		}
		sp := req.GetResourceSpans()[0].GetScopeSpans()[0].GetSpans()[0]
		a := sp.GetAttributes()
		if sp.GetName() != name || len(a) != 6 || a[0].GetKey() != key || a[0].GetValue().GetStringValue() != val ||
			a[1].GetValue().GetIntValue() != i || math.Float64bits(a[2].GetValue().GetDoubleValue()) != math.Float64bits(fl) ||
			a[3].GetValue().GetBoolValue() != b || !bytes.Equal(a[4].GetValue().GetBytesValue(), raw) ||
			len(a[5].GetValue().GetArrayValue().GetValues()) != n ||
			sp.GetEvents()[0].GetName() != name || sp.GetEvents()[0].GetAttributes()[0].GetValue().GetStringValue() != val {
			t.Fatalf("round trip differs: %v", sp)
		}
	})
}
