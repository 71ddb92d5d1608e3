package lifecycle

import (
	"math"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Field numbers of the OTLP messages the exporter writes, from the
// opentelemetry-proto definitions (collector/trace/v1/trace_service.proto,
// trace/v1/trace.proto, common/v1/common.proto, resource/v1/resource.proto).
// They are written with the helpers of otlpwire.go: the generated Go types
// would link the protobuf registry and gRPC into the binary (see doc.go).
const (
	// ExportTraceServiceRequest
	fRequestResourceSpans = 1

	// ResourceSpans
	fResourceSpansResource   = 1
	fResourceSpansScopeSpans = 2
	fResourceSpansSchemaURL  = 3

	// Resource
	fResourceAttributes = 1

	// ScopeSpans
	fScopeSpansScope     = 1
	fScopeSpansSpans     = 2
	fScopeSpansSchemaURL = 3

	// InstrumentationScope
	fScopeName       = 1
	fScopeVersion    = 2
	fScopeAttributes = 3

	// Span
	fSpanTraceID           = 1
	fSpanSpanID            = 2
	fSpanTraceState        = 3
	fSpanParentSpanID      = 4
	fSpanName              = 5
	fSpanKind              = 6
	fSpanStartTime         = 7 // fixed64
	fSpanEndTime           = 8 // fixed64
	fSpanAttributes        = 9
	fSpanDroppedAttributes = 10
	fSpanEvents            = 11
	fSpanDroppedEvents     = 12
	fSpanLinks             = 13
	fSpanDroppedLinks      = 14
	fSpanStatus            = 15
	fSpanFlags             = 16 // fixed32

	// Span.Event
	fEventTime              = 1 // fixed64
	fEventName              = 2
	fEventAttributes        = 3
	fEventDroppedAttributes = 4

	// Span.Link
	fLinkTraceID           = 1
	fLinkSpanID            = 2
	fLinkTraceState        = 3
	fLinkAttributes        = 4
	fLinkDroppedAttributes = 5
	fLinkFlags             = 6 // fixed32

	// Status
	fStatusMessage = 2
	fStatusCode    = 3

	// KeyValue
	fKeyValueKey   = 1
	fKeyValueValue = 2

	// AnyValue (a oneof: the chosen member is written even when zero)
	fAnyString = 1
	fAnyBool   = 2
	fAnyInt    = 3
	fAnyDouble = 4 // fixed64
	fAnyArray  = 5
	fAnyKVList = 6
	fAnyBytes  = 7

	// ArrayValue and KeyValueList
	fListValues = 1
)

// OTLP enum values that differ from, or are not part of, the Go API.
const (
	otlpStatusOK    = 1 // codes.Ok is 2 in the Go API
	otlpStatusError = 2 // codes.Error is 1 in the Go API

	// SpanFlags: bits 0-7 are the W3C trace flags; these two say whether
	// the parent (or linked) span context is known to be remote.
	otlpFlagHasIsRemote = 0x100
	otlpFlagIsRemote    = 0x200
)

// encodeTraces returns the protobuf encoding of an ExportTraceServiceRequest
// holding spans, grouped by resource and then by instrumentation scope in
// the order they first appear.
func encodeTraces(spans []sdktrace.ReadOnlySpan) []byte {
	type scopeGroup struct {
		scope instrumentation.Scope
		spans []sdktrace.ReadOnlySpan
	}
	type resourceGroup struct {
		res    *resource.Resource
		scopes []*scopeGroup
	}
	type scopeKey struct {
		res   attribute.Distinct
		scope instrumentation.Scope
	}
	var order []*resourceGroup
	byRes := map[attribute.Distinct]*resourceGroup{}
	byScope := map[scopeKey]*scopeGroup{}
	for _, s := range spans {
		if s == nil {
			continue
		}
		rk := s.Resource().Equivalent()
		rg := byRes[rk]
		if rg == nil {
			rg = &resourceGroup{res: s.Resource()}
			byRes[rk] = rg
			order = append(order, rg)
		}
		sk := scopeKey{rk, s.InstrumentationScope()}
		sg := byScope[sk]
		if sg == nil {
			sg = &scopeGroup{scope: sk.scope}
			byScope[sk] = sg
			rg.scopes = append(rg.scopes, sg)
		}
		sg.spans = append(sg.spans, s)
	}

	var e pbEncoder
	for _, rg := range order {
		rs := e.begin(fRequestResourceSpans)
		if rg.res != nil {
			r := e.begin(fResourceSpansResource)
			for it := rg.res.Iter(); it.Next(); {
				e.keyValue(fResourceAttributes, it.Attribute())
			}
			e.end(r)
		}
		for _, sg := range rg.scopes {
			ss := e.begin(fResourceSpansScopeSpans)
			if sg.scope != (instrumentation.Scope{}) {
				sc := e.begin(fScopeSpansScope)
				e.str(fScopeName, sg.scope.Name)
				e.str(fScopeVersion, sg.scope.Version)
				for it := sg.scope.Attributes.Iter(); it.Next(); {
					e.keyValue(fScopeAttributes, it.Attribute())
				}
				e.end(sc)
			}
			for _, s := range sg.spans {
				e.span(fScopeSpansSpans, s)
			}
			e.str(fScopeSpansSchemaURL, sg.scope.SchemaURL)
			e.end(ss)
		}
		e.str(fResourceSpansSchemaURL, rg.res.SchemaURL())
		e.end(rs)
	}
	return e.buf
}

// pbEncoder appends protobuf fields to buf. Scalar methods follow proto3:
// a zero value is not written. Nested messages are written in place
// between begin and end, so no message is encoded twice.
type pbEncoder struct {
	buf []byte
}

// begin starts the nested message field num and returns the offset of its
// body for end. One byte is reserved for the length, enough for bodies
// under 128 bytes; end makes room when a body is longer.
func (e *pbEncoder) begin(num int) int {
	e.buf = appendTag(e.buf, num, wireBytes)
	e.buf = append(e.buf, 0)
	return len(e.buf)
}

// end writes the length of the message begun at body.
func (e *pbEncoder) end(body int) {
	n := len(e.buf) - body
	size := varintSize(uint64(n))
	if size > 1 {
		e.buf = append(e.buf, make([]byte, size-1)...)
		copy(e.buf[body+size-1:], e.buf[body:body+n])
	}
	// Writes the varint over the reserved byte (and the room made above);
	// the slice has the capacity, so nothing is reallocated.
	appendVarint(e.buf[:body-1], uint64(n))
}

func (e *pbEncoder) bytes(num int, v []byte) {
	if len(v) > 0 {
		e.buf = appendTag(e.buf, num, wireBytes)
		e.buf = appendBytes(e.buf, v)
	}
}

func (e *pbEncoder) str(num int, v string) {
	if v != "" {
		e.buf = appendTag(e.buf, num, wireBytes)
		e.buf = appendString(e.buf, v)
	}
}

func (e *pbEncoder) varint(num int, v uint64) {
	if v != 0 {
		e.buf = appendTag(e.buf, num, wireVarint)
		e.buf = appendVarint(e.buf, v)
	}
}

func (e *pbEncoder) fixed64(num int, v uint64) {
	if v != 0 {
		e.buf = appendTag(e.buf, num, wireFixed64)
		e.buf = appendFixed64(e.buf, v)
	}
}

func (e *pbEncoder) fixed32(num int, v uint32) {
	if v != 0 {
		e.buf = appendTag(e.buf, num, wireFixed32)
		e.buf = appendFixed32(e.buf, v)
	}
}

func (e *pbEncoder) span(num int, s sdktrace.ReadOnlySpan) {
	m := e.begin(num)
	sc := s.SpanContext()
	tid, sid := sc.TraceID(), sc.SpanID()
	e.bytes(fSpanTraceID, tid[:])
	e.bytes(fSpanSpanID, sid[:])
	e.str(fSpanTraceState, sc.TraceState().String())
	parent := s.Parent()
	if psid := parent.SpanID(); psid.IsValid() {
		e.bytes(fSpanParentSpanID, psid[:])
	}
	e.str(fSpanName, s.Name())
	e.varint(fSpanKind, spanKind(s.SpanKind()))
	e.fixed64(fSpanStartTime, unixNano(s.StartTime()))
	e.fixed64(fSpanEndTime, unixNano(s.EndTime()))
	for _, kv := range s.Attributes() {
		e.keyValue(fSpanAttributes, kv)
	}
	e.varint(fSpanDroppedAttributes, count(s.DroppedAttributes()))
	for _, ev := range s.Events() {
		m := e.begin(fSpanEvents)
		e.fixed64(fEventTime, unixNano(ev.Time))
		e.str(fEventName, ev.Name)
		for _, kv := range ev.Attributes {
			e.keyValue(fEventAttributes, kv)
		}
		e.varint(fEventDroppedAttributes, count(ev.DroppedAttributeCount))
		e.end(m)
	}
	e.varint(fSpanDroppedEvents, count(s.DroppedEvents()))
	for _, l := range s.Links() {
		m := e.begin(fSpanLinks)
		tid, sid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		e.bytes(fLinkTraceID, tid[:])
		e.bytes(fLinkSpanID, sid[:])
		e.str(fLinkTraceState, l.SpanContext.TraceState().String())
		for _, kv := range l.Attributes {
			e.keyValue(fLinkAttributes, kv)
		}
		e.varint(fLinkDroppedAttributes, count(l.DroppedAttributeCount))
		e.fixed32(fLinkFlags, spanFlags(l.SpanContext.TraceFlags(), l.SpanContext.IsRemote()))
		e.end(m)
	}
	e.varint(fSpanDroppedLinks, count(s.DroppedLinks()))
	if st := s.Status(); st.Code != codes.Unset || st.Description != "" {
		m := e.begin(fSpanStatus)
		e.str(fStatusMessage, st.Description)
		e.varint(fStatusCode, statusCode(st.Code))
		e.end(m)
	}
	e.fixed32(fSpanFlags, spanFlags(sc.TraceFlags(), parent.IsRemote()))
	e.end(m)
}

func (e *pbEncoder) keyValue(num int, kv attribute.KeyValue) {
	m := e.begin(num)
	e.str(fKeyValueKey, string(kv.Key))
	e.anyValue(fKeyValueValue, kv.Value)
	e.end(m)
}

// anyValue writes v as an AnyValue. Slices become an ArrayValue of one
// AnyValue per element, maps a KeyValueList; an empty or unknown value is
// an AnyValue with no member set.
// arrayValue writes xs as an AnyValue's array_value, each element as the
// AnyValue value(x).
func arrayValue[T any](e *pbEncoder, xs []T, value func(T) attribute.Value) {
	a := e.begin(fAnyArray)
	for _, x := range xs {
		e.anyValue(fListValues, value(x))
	}
	e.end(a)
}

func (e *pbEncoder) anyValue(num int, v attribute.Value) {
	m := e.begin(num)
	switch v.Type() {
	case attribute.STRING:
		e.buf = appendTag(e.buf, fAnyString, wireBytes)
		e.buf = appendString(e.buf, v.AsString())
	case attribute.BOOL:
		e.buf = appendTag(e.buf, fAnyBool, wireVarint)
		e.buf = appendVarint(e.buf, boolVarint(v.AsBool()))
	case attribute.INT64:
		e.buf = appendTag(e.buf, fAnyInt, wireVarint)
		e.buf = appendVarint(e.buf, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		e.buf = appendTag(e.buf, fAnyDouble, wireFixed64)
		e.buf = appendFixed64(e.buf, math.Float64bits(v.AsFloat64()))
	case attribute.BYTESLICE:
		e.buf = appendTag(e.buf, fAnyBytes, wireBytes)
		e.buf = appendBytes(e.buf, v.AsByteSlice())
	case attribute.STRINGSLICE:
		arrayValue(e, v.AsStringSlice(), attribute.StringValue)
	case attribute.BOOLSLICE:
		arrayValue(e, v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		arrayValue(e, v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		arrayValue(e, v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.SLICE:
		arrayValue(e, v.AsSlice(), func(x attribute.Value) attribute.Value { return x })
	case attribute.MAP:
		l := e.begin(fAnyKVList)
		for _, kv := range v.AsMap() {
			e.keyValue(fListValues, kv)
		}
		e.end(l)
	}
	e.end(m)
}

// unixNano is t in nanoseconds since the Unix epoch; 0 (unset in OTLP) for
// the zero time and anything before the epoch, which uint64 cannot hold.
func unixNano(t time.Time) uint64 {
	if t.IsZero() || t.Before(time.Unix(0, 0)) {
		return 0
	}
	return uint64(t.UnixNano())
}

func boolVarint(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// count clamps a dropped count to the uint32 of the wire format.
func count(n int) uint64 {
	return uint64(min(max(n, 0), math.MaxUint32))
}

func spanFlags(tf trace.TraceFlags, remote bool) uint32 {
	f := uint32(tf) | otlpFlagHasIsRemote
	if remote {
		f |= otlpFlagIsRemote
	}
	return f
}

func spanKind(k trace.SpanKind) uint64 {
	// The OTLP numbering matches the Go API's (internal 1 ... consumer 5);
	// anything else is SPAN_KIND_UNSPECIFIED.
	switch k {
	case trace.SpanKindInternal, trace.SpanKindServer, trace.SpanKindClient,
		trace.SpanKindProducer, trace.SpanKindConsumer:
		return uint64(k)
	}
	return 0
}

func statusCode(c codes.Code) uint64 {
	switch c {
	case codes.Ok:
		return otlpStatusOK
	case codes.Error:
		return otlpStatusError
	}
	return 0
}
