package lifecycle

import (
	"encoding/hex"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// An ExportTraceServiceRequest in OTLP's JSON encoding (the OTLP
// specification, "JSON Protobuf Encoding"): protobuf's JSON mapping with
// lowerCamelCase names, except that trace and span ids are hex and enums
// are numbers. 64-bit integers are strings, as protobuf's mapping says.
// Unexported fields are not sent.
type (
	otlpRequest struct {
		ResourceSpans []otlpResourceSpans `json:"resourceSpans"`
	}
	otlpResourceSpans struct {
		Resource   *otlpResource    `json:"resource,omitzero"`
		ScopeSpans []otlpScopeSpans `json:"scopeSpans"`
		SchemaURL  string           `json:"schemaUrl,omitzero"`
		key        attribute.Distinct
	}
	otlpResource struct {
		Attributes []otlpKV `json:"attributes,omitzero"`
	}
	otlpScopeSpans struct {
		Scope     *otlpScope `json:"scope,omitzero"`
		Spans     []otlpSpan `json:"spans"`
		SchemaURL string     `json:"schemaUrl,omitzero"`
		key       instrumentation.Scope
	}
	otlpScope struct {
		Name       string   `json:"name,omitzero"`
		Version    string   `json:"version,omitzero"`
		Attributes []otlpKV `json:"attributes,omitzero"`
	}
	otlpSpan struct {
		TraceID           string      `json:"traceId"`
		SpanID            string      `json:"spanId"`
		TraceState        string      `json:"traceState,omitzero"`
		ParentSpanID      string      `json:"parentSpanId,omitzero"`
		Flags             uint32      `json:"flags,omitzero"`
		Name              string      `json:"name"`
		Kind              int         `json:"kind,omitzero"`
		StartTimeUnixNano uint64      `json:"startTimeUnixNano,omitzero,string"`
		EndTimeUnixNano   uint64      `json:"endTimeUnixNano,omitzero,string"`
		Attributes        []otlpKV    `json:"attributes,omitzero"`
		DroppedAttributes uint32      `json:"droppedAttributesCount,omitzero"`
		Events            []otlpEvent `json:"events,omitzero"`
		DroppedEvents     uint32      `json:"droppedEventsCount,omitzero"`
		Links             []otlpLink  `json:"links,omitzero"`
		DroppedLinks      uint32      `json:"droppedLinksCount,omitzero"`
		Status            *otlpStatus `json:"status,omitzero"`
	}
	otlpEvent struct {
		TimeUnixNano      uint64   `json:"timeUnixNano,omitzero,string"`
		Name              string   `json:"name,omitzero"`
		Attributes        []otlpKV `json:"attributes,omitzero"`
		DroppedAttributes uint32   `json:"droppedAttributesCount,omitzero"`
	}
	otlpLink struct {
		TraceID           string   `json:"traceId"`
		SpanID            string   `json:"spanId"`
		TraceState        string   `json:"traceState,omitzero"`
		Attributes        []otlpKV `json:"attributes,omitzero"`
		DroppedAttributes uint32   `json:"droppedAttributesCount,omitzero"`
		Flags             uint32   `json:"flags,omitzero"`
	}
	otlpStatus struct {
		Message string `json:"message,omitzero"`
		Code    int    `json:"code,omitzero"`
	}
	otlpKV struct {
		Key   string  `json:"key"`
		Value otlpAny `json:"value"`
	}
	// otlpAny is an AnyValue, a oneof: one member (written even when it
	// is zero: "stringValue", "intValue", ...) or none.
	otlpAny map[string]any
)

// otlpStatusCode is OTLP's number for a status code: codes.Ok is 2 and
// codes.Error 1 in the Go API, the other way round in OTLP.
var otlpStatusCode = map[codes.Code]int{codes.Ok: 1, codes.Error: 2}

// nonFinite spells NaN and the infinities as protobuf's JSON mapping does
// ("NaN", "Infinity", "-Infinity"), from strconv's spelling.
var nonFinite = strings.NewReplacer("+Inf", "Infinity", "-Inf", "-Infinity")

// encodeTraces returns the OTLP/JSON ExportTraceServiceRequest holding
// spans, grouped by resource and then by instrumentation scope in the
// order they first appear.
func encodeTraces(spans []sdktrace.ReadOnlySpan) []byte {
	req := otlpRequest{ResourceSpans: []otlpResourceSpans{}}
	for _, s := range spans {
		if s == nil {
			continue
		}
		res, scope := s.Resource(), s.InstrumentationScope()
		i := slices.IndexFunc(req.ResourceSpans, func(rs otlpResourceSpans) bool { return rs.key == res.Equivalent() })
		if i < 0 {
			i = len(req.ResourceSpans)
			rs := otlpResourceSpans{SchemaURL: res.SchemaURL(), key: res.Equivalent()}
			if res != nil {
				rs.Resource = &otlpResource{Attributes: keyValues(res.Attributes())}
			}
			req.ResourceSpans = append(req.ResourceSpans, rs)
		}
		rs := &req.ResourceSpans[i]
		j := slices.IndexFunc(rs.ScopeSpans, func(ss otlpScopeSpans) bool { return ss.key == scope })
		if j < 0 {
			j = len(rs.ScopeSpans)
			ss := otlpScopeSpans{SchemaURL: scope.SchemaURL, key: scope}
			if scope != (instrumentation.Scope{}) {
				ss.Scope = &otlpScope{Name: scope.Name, Version: scope.Version, Attributes: keyValues(scope.Attributes.ToSlice())}
			}
			rs.ScopeSpans = append(rs.ScopeSpans, ss)
		}
		rs.ScopeSpans[j].Spans = append(rs.ScopeSpans[j].Spans, spanOf(s))
	}
	// Invalid UTF-8 in a string (a command's bytes) becomes U+FFFD, as
	// receivers require valid strings.
	b, err := json.Marshal(req, jsontext.AllowInvalidUTF8(true))
	if err != nil {
		panic("lifecycle: OTLP request does not encode: " + err.Error()) // plain values always do
	}
	return b
}

func spanOf(s sdktrace.ReadOnlySpan) otlpSpan {
	sc, parent := s.SpanContext(), s.Parent()
	tid, sid, psid := sc.TraceID(), sc.SpanID(), parent.SpanID()
	out := otlpSpan{
		TraceID: hex.EncodeToString(tid[:]), SpanID: hex.EncodeToString(sid[:]), TraceState: sc.TraceState().String(),
		Flags: spanFlags(sc.TraceFlags(), parent.IsRemote()), Name: s.Name(), Kind: int(s.SpanKind()),
		StartTimeUnixNano: unixNano(s.StartTime()), EndTimeUnixNano: unixNano(s.EndTime()),
		Attributes: keyValues(s.Attributes()), DroppedAttributes: count(s.DroppedAttributes()),
		DroppedEvents: count(s.DroppedEvents()), DroppedLinks: count(s.DroppedLinks()),
	}
	if out.Kind < 0 || out.Kind > int(trace.SpanKindConsumer) { // the Go API numbers kinds as OTLP does
		out.Kind = 0
	}
	if psid.IsValid() {
		out.ParentSpanID = hex.EncodeToString(psid[:])
	}
	for _, ev := range s.Events() {
		out.Events = append(out.Events, otlpEvent{TimeUnixNano: unixNano(ev.Time), Name: ev.Name,
			Attributes: keyValues(ev.Attributes), DroppedAttributes: count(ev.DroppedAttributeCount)})
	}
	for _, l := range s.Links() {
		ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		out.Links = append(out.Links, otlpLink{TraceID: hex.EncodeToString(ltid[:]), SpanID: hex.EncodeToString(lsid[:]),
			TraceState: l.SpanContext.TraceState().String(), Attributes: keyValues(l.Attributes),
			DroppedAttributes: count(l.DroppedAttributeCount), Flags: spanFlags(l.SpanContext.TraceFlags(), l.SpanContext.IsRemote())})
	}
	if st := s.Status(); st.Code != codes.Unset || st.Description != "" {
		out.Status = &otlpStatus{Message: st.Description, Code: otlpStatusCode[st.Code]}
	}
	return out
}

func keyValues(kvs []attribute.KeyValue) []otlpKV {
	out := make([]otlpKV, 0, len(kvs))
	for _, kv := range kvs {
		out = append(out, otlpKV{Key: string(kv.Key), Value: anyValue(kv.Value)})
	}
	return out
}

// anyValue is v as an AnyValue. Slices become an array of one AnyValue
// per element, maps a key-value list; an empty or unknown value has no
// member set.
func anyValue(v attribute.Value) otlpAny {
	switch v.Type() {
	case attribute.STRING:
		return otlpAny{"stringValue": v.AsString()}
	case attribute.BOOL:
		return otlpAny{"boolValue": v.AsBool()}
	case attribute.INT64:
		return otlpAny{"intValue": strconv.FormatInt(v.AsInt64(), 10)}
	case attribute.FLOAT64:
		if f := v.AsFloat64(); math.IsNaN(f) || math.IsInf(f, 0) {
			return otlpAny{"doubleValue": nonFinite.Replace(strconv.FormatFloat(f, 'g', -1, 64))}
		}
		return otlpAny{"doubleValue": v.AsFloat64()}
	case attribute.BYTESLICE:
		return otlpAny{"bytesValue": v.AsByteSlice()}
	case attribute.STRINGSLICE:
		return arrayValue(v.AsStringSlice(), attribute.StringValue)
	case attribute.BOOLSLICE:
		return arrayValue(v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		return arrayValue(v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		return arrayValue(v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.SLICE:
		return arrayValue(v.AsSlice(), func(x attribute.Value) attribute.Value { return x })
	case attribute.MAP:
		return otlpAny{"kvlistValue": map[string][]otlpKV{"values": keyValues(v.AsMap())}}
	}
	return otlpAny{}
}

func arrayValue[T any](xs []T, value func(T) attribute.Value) otlpAny {
	vs := make([]otlpAny, 0, len(xs))
	for _, x := range xs {
		vs = append(vs, anyValue(value(x)))
	}
	return otlpAny{"arrayValue": map[string][]otlpAny{"values": vs}}
}

// unixNano is t in nanoseconds since the Unix epoch; 0 (unset in OTLP) for
// the zero time and anything before the epoch, which uint64 cannot hold.
func unixNano(t time.Time) uint64 {
	if t.IsZero() || t.Before(time.Unix(0, 0)) {
		return 0
	}
	return uint64(t.UnixNano())
}

// count clamps a dropped count to the uint32 of the wire format.
func count(n int) uint32 { return uint32(min(max(n, 0), math.MaxUint32)) }

// spanFlags are the W3C trace flags (bits 0-7) and whether the parent (or
// linked) span context is remote: 0x100 says it is known, 0x200 that it is.
func spanFlags(tf trace.TraceFlags, remote bool) uint32 {
	if remote {
		return uint32(tf) | 0x300
	}
	return uint32(tf) | 0x100
}

// parsePartialSuccess reads partial_success (rejectedSpans, a number or a
// string, and errorMessage) from an OTLP/JSON ExportTraceServiceResponse.
func parsePartialSuccess(b []byte) (rejected int64, msg string, err error) {
	var resp struct {
		PartialSuccess struct {
			RejectedSpans jsontext.Value `json:"rejectedSpans"`
			ErrorMessage  string         `json:"errorMessage"`
		} `json:"partialSuccess"`
	}
	if err := json.Unmarshal(b, &resp, json.RejectUnknownMembers(false)); err != nil {
		return 0, "", err
	}
	if n := resp.PartialSuccess.RejectedSpans; len(n) > 0 && string(n) != "null" {
		if rejected, err = strconv.ParseInt(strings.Trim(string(n), `"`), 10, 64); err != nil {
			return 0, "", err
		}
	}
	return rejected, resp.PartialSuccess.ErrorMessage, nil
}
