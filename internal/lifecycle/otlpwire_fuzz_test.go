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
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// FuzzParsePartialSuccess compares parsePartialSuccess with the official
// protobuf runtime: whatever proto.Unmarshal accepts, the hand-written
// reader accepts too and reads the same rejected_spans and error_message
// (unknown fields, repeated fields, groups and all). It never panics.
func FuzzParsePartialSuccess(f *testing.F) {
	seed := func(m *coltracepb.ExportTraceServiceResponse) []byte {
		b, err := proto.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	f.Add([]byte{})
	f.Add(seed(&coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{}}))
	f.Add(seed(&coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{RejectedSpans: 3, ErrorMessage: "too big"}}))
	f.Add(seed(&coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{RejectedSpans: -1}}))
	// Unknown fields of every wire type, a group, then partial_success twice.
	var b []byte
	b = protowire.AppendTag(b, 7, protowire.VarintType)
	b = protowire.AppendVarint(b, 300)
	b = protowire.AppendTag(b, 8, protowire.Fixed32Type)
	b = protowire.AppendFixed32(b, 1)
	b = protowire.AppendTag(b, 9, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, 1)
	b = protowire.AppendTag(b, 10, protowire.StartGroupType)
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, 1)
	b = protowire.AppendTag(b, 10, protowire.EndGroupType)
	b = append(b, seed(&coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{RejectedSpans: 5}})...)
	b = append(b, seed(&coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{ErrorMessage: "m"}})...)
	f.Add(b)
	f.Add([]byte{0x0a, 0x02, 0x08}) // truncated
	f.Add([]byte{0x0c})             // end group without a start

	f.Fuzz(func(t *testing.T, b []byte) {
		rejected, msg, err := parsePartialSuccess(b)
		var want coltracepb.ExportTraceServiceResponse
		if proto.Unmarshal(b, &want) != nil {
			return // invalid for protobuf too (or invalid UTF-8, which we do not check)
		}
		if err != nil {
			t.Fatalf("rejected input proto.Unmarshal accepts: %v", err)
		}
		if rejected != want.GetPartialSuccess().GetRejectedSpans() || msg != want.GetPartialSuccess().GetErrorMessage() {
			t.Fatalf("read (%d, %q), proto.Unmarshal (%d, %q)", rejected, msg,
				want.GetPartialSuccess().GetRejectedSpans(), want.GetPartialSuccess().GetErrorMessage())
		}
	})
}

// FuzzEncodeTraces: whatever a span holds, proto.Unmarshal reads back the
// same name and attribute values from encodeTraces' output.
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
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(encodeTraces([]sdktrace.ReadOnlySpan{s.Snapshot()}), &req); err != nil {
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
