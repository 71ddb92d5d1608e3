package lifecycle

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

// Protobuf values of the official generated types, for expectations.
func pbStr(s string) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: s}}
}
func pbBool(b bool) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_BoolValue{BoolValue: b}}
}
func pbInt(i int64) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: i}}
}
func pbDouble(f float64) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_DoubleValue{DoubleValue: f}}
}
func pbBytes(b []byte) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_BytesValue{BytesValue: b}}
}
func pbArray(vs ...*commonpb.AnyValue) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_ArrayValue{ArrayValue: &commonpb.ArrayValue{Values: vs}}}
}
func pbMap(kvs ...*commonpb.KeyValue) *commonpb.AnyValue {
	return &commonpb.AnyValue{Value: &commonpb.AnyValue_KvlistValue{KvlistValue: &commonpb.KeyValueList{Values: kvs}}}
}
func pbKV(k string, v *commonpb.AnyValue) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: v}
}

// everyAttribute has every value type the attribute package can hold,
// zero values included (a oneof member must be written even when zero),
// and a string long enough to need a three-byte length prefix.
func everyAttribute() ([]attribute.KeyValue, []*commonpb.KeyValue) {
	long := strings.Repeat("x", 20000)
	attrs := []attribute.KeyValue{
		attribute.String("s", "text ✓"),
		attribute.String("s.empty", ""),
		attribute.String("s.long", long),
		attribute.Bool("b", true),
		attribute.Bool("b.false", false),
		attribute.Int64("i", -42),
		attribute.Int64("i.zero", 0),
		attribute.Int64("i.max", 1<<63-1),
		attribute.Float64("f", 3.25),
		attribute.Float64("f.zero", 0),
		attribute.StringSlice("ss", []string{"a", "", "c"}),
		attribute.BoolSlice("bs", []bool{true, false}),
		attribute.Int64Slice("is", []int64{1, -2, 0}),
		attribute.Float64Slice("fs", []float64{0.5, -1e300}),
		attribute.StringSlice("ss.empty", []string{}),
		attribute.ByteSlice("bytes", []byte{0, 1, 0xff}),
		attribute.Slice("mixed", attribute.StringValue("x"), attribute.Int64Value(7), attribute.SliceValue(attribute.BoolValue(true))),
		attribute.Map("map", attribute.String("k", "v"), attribute.Int64("n", 1)),
		{Key: "empty"}, // the zero Value
	}
	want := []*commonpb.KeyValue{
		pbKV("s", pbStr("text ✓")),
		pbKV("s.empty", pbStr("")),
		pbKV("s.long", pbStr(long)),
		pbKV("b", pbBool(true)),
		pbKV("b.false", pbBool(false)),
		pbKV("i", pbInt(-42)),
		pbKV("i.zero", pbInt(0)),
		pbKV("i.max", pbInt(1<<63-1)),
		pbKV("f", pbDouble(3.25)),
		pbKV("f.zero", pbDouble(0)),
		pbKV("ss", pbArray(pbStr("a"), pbStr(""), pbStr("c"))),
		pbKV("bs", pbArray(pbBool(true), pbBool(false))),
		pbKV("is", pbArray(pbInt(1), pbInt(-2), pbInt(0))),
		pbKV("fs", pbArray(pbDouble(0.5), pbDouble(-1e300))),
		pbKV("ss.empty", pbArray()),
		pbKV("bytes", pbBytes([]byte{0, 1, 0xff})),
		pbKV("mixed", pbArray(pbStr("x"), pbInt(7), pbArray(pbBool(true)))),
		pbKV("map", pbMap(pbKV("k", pbStr("v")), pbKV("n", pbInt(1)))),
		pbKV("empty", &commonpb.AnyValue{}),
	}
	return attrs, want
}

func TestEncodeTracesDecodesWithOfficialTypes(t *testing.T) {
	attrs, wantAttrs := everyAttribute()
	tid := trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	ts, err := trace.ParseTraceState("vendor=v1,other=o2")
	if err != nil {
		t.Fatal(err)
	}
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{1, 1, 1, 1, 1, 1, 1, 1}, TraceFlags: trace.FlagsSampled, TraceState: ts})
	remoteParent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{2, 2, 2, 2, 2, 2, 2, 2}, Remote: true})
	linked := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{9: 9}, SpanID: trace.SpanID{3: 3}, TraceFlags: trace.FlagsSampled, TraceState: ts, Remote: true})
	ltid, lsid := linked.TraceID(), linked.SpanID()
	child := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{4, 4, 4, 4, 4, 4, 4, 4}})

	res1 := resource.NewWithAttributes("https://schema/1", attribute.String("service.name", "svc"), attribute.Int64("pid", 7))
	res2 := resource.NewSchemaless(attribute.String("service.name", "other"))
	scope := instrumentation.Scope{Name: "tiny-agent", Version: "1.2.3", SchemaURL: "https://schema/scope",
		Attributes: attribute.NewSet(attribute.Bool("scope.attr", true))}
	start := time.Unix(1_700_000_000, 123_456_789)

	full := tracetest.SpanStub{
		Name:        "full",
		SpanContext: sc,
		Parent:      remoteParent,
		SpanKind:    trace.SpanKindClient,
		StartTime:   start,
		EndTime:     start.Add(1500 * time.Millisecond),
		Attributes:  attrs,
		Events: []sdktrace.Event{
			{Name: "ev1", Time: start.Add(time.Millisecond), Attributes: []attribute.KeyValue{attribute.Int64("n", 1)}, DroppedAttributeCount: 2},
			{Name: "ev2", Time: start.Add(2 * time.Millisecond)},
		},
		Links: []sdktrace.Link{
			{SpanContext: linked, Attributes: []attribute.KeyValue{attribute.String("why", "retry")}, DroppedAttributeCount: 1},
		},
		Status:               sdktrace.Status{Code: codes.Error, Description: "boom"},
		DroppedAttributes:    3,
		DroppedEvents:        4,
		DroppedLinks:         5,
		Resource:             res1,
		InstrumentationScope: scope,
	}
	// A child with defaults only: no status, no parent remoteness, zero end time.
	bare := tracetest.SpanStub{Name: "bare", SpanContext: child, Parent: sc, StartTime: start, Resource: res1, InstrumentationScope: scope}
	okSpan := tracetest.SpanStub{Name: "ok", SpanContext: child, SpanKind: trace.SpanKindServer, Status: sdktrace.Status{Code: codes.Ok},
		Resource: res1, InstrumentationScope: instrumentation.Scope{Name: "second-scope"}}
	otherRes := tracetest.SpanStub{Name: "other-resource", SpanContext: child, SpanKind: trace.SpanKindConsumer, Resource: res2, InstrumentationScope: scope}

	body := encodeTraces([]sdktrace.ReadOnlySpan{full.Snapshot(), bare.Snapshot(), nil, okSpan.Snapshot(), otherRes.Snapshot()})
	got, err := decodeOTLP(body)
	if err != nil {
		t.Fatal(err)
	}

	const hasIsRemote, isRemote = uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_HAS_IS_REMOTE_MASK), uint32(tracepb.SpanFlags_SPAN_FLAGS_CONTEXT_IS_REMOTE_MASK)
	pbScope := &commonpb.InstrumentationScope{Name: "tiny-agent", Version: "1.2.3", Attributes: []*commonpb.KeyValue{pbKV("scope.attr", pbBool(true))}}
	want := &coltracepb.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{
		{
			Resource:  &resourcepb.Resource{Attributes: []*commonpb.KeyValue{pbKV("pid", pbInt(7)), pbKV("service.name", pbStr("svc"))}},
			SchemaUrl: "https://schema/1",
			ScopeSpans: []*tracepb.ScopeSpans{
				{Scope: pbScope, SchemaUrl: "https://schema/scope", Spans: []*tracepb.Span{
					{
						TraceId:                tid[:],
						SpanId:                 []byte{1, 1, 1, 1, 1, 1, 1, 1},
						TraceState:             "vendor=v1,other=o2",
						ParentSpanId:           []byte{2, 2, 2, 2, 2, 2, 2, 2},
						Flags:                  0x01 | hasIsRemote | isRemote,
						Name:                   "full",
						Kind:                   tracepb.Span_SPAN_KIND_CLIENT,
						StartTimeUnixNano:      uint64(start.UnixNano()),
						EndTimeUnixNano:        uint64(start.Add(1500 * time.Millisecond).UnixNano()),
						Attributes:             wantAttrs,
						DroppedAttributesCount: 3,
						Events: []*tracepb.Span_Event{
							{Name: "ev1", TimeUnixNano: uint64(start.Add(time.Millisecond).UnixNano()), Attributes: []*commonpb.KeyValue{pbKV("n", pbInt(1))}, DroppedAttributesCount: 2},
							{Name: "ev2", TimeUnixNano: uint64(start.Add(2 * time.Millisecond).UnixNano())},
						},
						DroppedEventsCount: 4,
						Links: []*tracepb.Span_Link{{
							TraceId:                ltid[:],
							SpanId:                 lsid[:],
							TraceState:             "vendor=v1,other=o2",
							Attributes:             []*commonpb.KeyValue{pbKV("why", pbStr("retry"))},
							DroppedAttributesCount: 1,
							Flags:                  0x01 | hasIsRemote | isRemote,
						}},
						DroppedLinksCount: 5,
						Status:            &tracepb.Status{Code: tracepb.Status_STATUS_CODE_ERROR, Message: "boom"},
					},
					{
						TraceId:           tid[:],
						SpanId:            []byte{4, 4, 4, 4, 4, 4, 4, 4},
						ParentSpanId:      []byte{1, 1, 1, 1, 1, 1, 1, 1},
						Flags:             hasIsRemote,
						Name:              "bare",
						StartTimeUnixNano: uint64(start.UnixNano()),
					},
				}},
				{Scope: &commonpb.InstrumentationScope{Name: "second-scope"}, Spans: []*tracepb.Span{{
					TraceId: tid[:], SpanId: []byte{4, 4, 4, 4, 4, 4, 4, 4}, Flags: hasIsRemote, Name: "ok",
					Kind: tracepb.Span_SPAN_KIND_SERVER, Status: &tracepb.Status{Code: tracepb.Status_STATUS_CODE_OK},
				}}},
			},
		},
		{
			Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{pbKV("service.name", pbStr("other"))}},
			ScopeSpans: []*tracepb.ScopeSpans{{Scope: pbScope, SchemaUrl: "https://schema/scope", Spans: []*tracepb.Span{{
				TraceId: tid[:], SpanId: []byte{4, 4, 4, 4, 4, 4, 4, 4}, Flags: hasIsRemote, Name: "other-resource",
				Kind: tracepb.Span_SPAN_KIND_CONSUMER,
			}}}},
		},
	}}
	if !proto.Equal(got, want) {
		t.Errorf("decoded request differs\n got: %s\nwant: %s", shortText(got), shortText(want))
	}
	// The decoder saw every byte as a known field.
	if len(got.ProtoReflect().GetUnknown()) != 0 {
		t.Error("unknown fields at the top level")
	}
	// Ids are hex, 64-bit integers strings (OTLP/JSON).
	for _, want := range []string{`"traceId":"0102030405060708090a0b0c0d0e0f10"`, `"parentSpanId":"0202020202020202"`,
		fmt.Sprintf(`"startTimeUnixNano":"%d"`, start.UnixNano()), `"intValue":"-42"`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the request lacks %s", want)
		}
	}
}

// shortText prints m without the 20,000-character attribute.
func shortText(m proto.Message) string {
	s := prototext.Format(m)
	return strings.ReplaceAll(s, strings.Repeat("x", 20000), "x…")
}

func TestEncodeTracesEmpty(t *testing.T) {
	if b := encodeTraces(nil); string(b) != `{"resourceSpans":[]}` {
		t.Errorf("encodeTraces(nil) = %s", b)
	}
}

// Doubles that JSON numbers cannot hold are written as protobuf's JSON
// mapping writes them, and read back.
func TestEncodeTracesNonFiniteDoubles(t *testing.T) {
	s := tracetest.SpanStub{Name: "f", SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}}),
		Attributes: []attribute.KeyValue{attribute.Float64("nan", math.NaN()), attribute.Float64("inf", math.Inf(1)), attribute.Float64("-inf", math.Inf(-1))}}
	got, err := decodeOTLP(encodeTraces([]sdktrace.ReadOnlySpan{s.Snapshot()}))
	if err != nil {
		t.Fatal(err)
	}
	a := got.GetResourceSpans()[0].GetScopeSpans()[0].GetSpans()[0].GetAttributes()
	if !math.IsNaN(a[0].GetValue().GetDoubleValue()) || !math.IsInf(a[1].GetValue().GetDoubleValue(), 1) || !math.IsInf(a[2].GetValue().GetDoubleValue(), -1) {
		t.Errorf("non-finite doubles read back as %v", a)
	}
}

func TestEncodeTracesInvalidUTF8(t *testing.T) {
	s := tracetest.SpanStub{Name: "bad\xff", SpanContext: trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}}),
		Attributes: []attribute.KeyValue{attribute.String("cmd", "printf '\xfe'")}}
	got, err := decodeOTLP(encodeTraces([]sdktrace.ReadOnlySpan{s.Snapshot()}))
	if err != nil {
		t.Fatal(err)
	}
	sp := got.GetResourceSpans()[0].GetScopeSpans()[0].GetSpans()[0]
	if sp.GetName() != "bad\ufffd" || sp.GetAttributes()[0].GetValue().GetStringValue() != "printf '\ufffd'" {
		t.Errorf("invalid UTF-8 read back as %q, %q", sp.GetName(), sp.GetAttributes()[0].GetValue().GetStringValue())
	}
}
