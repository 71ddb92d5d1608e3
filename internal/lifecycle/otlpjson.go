package lifecycle

import (
	"encoding/hex"
	"math"
	"strconv"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// An ExportTraceServiceRequest in OTLP's JSON encoding (the OTLP
// specification, "JSON Protobuf Encoding"): protobuf's JSON mapping with
// lowerCamelCase names, except that trace and span ids are hex and enums
// are numbers. 64-bit integers are strings, as protobuf's mapping says.
type (
	otlpRequest struct {
		ResourceSpans []otlpResourceSpans `json:"resourceSpans"`
	}
	otlpResourceSpans struct {
		Resource   *otlpResource    `json:"resource,omitzero"`
		ScopeSpans []otlpScopeSpans `json:"scopeSpans"`
		SchemaURL  string           `json:"schemaUrl,omitzero"`
	}
	otlpResource struct {
		Attributes []otlpKV `json:"attributes,omitzero"`
	}
	otlpScopeSpans struct {
		Scope     *otlpScope `json:"scope,omitzero"`
		Spans     []otlpSpan `json:"spans"`
		SchemaURL string     `json:"schemaUrl,omitzero"`
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
	// otlpAny is an AnyValue: at most one member is set, and the set one
	// is written even when it is zero (a oneof).
	otlpAny struct {
		String *string        `json:"stringValue,omitzero"`
		Bool   *bool          `json:"boolValue,omitzero"`
		Int    *int64         `json:"intValue,omitzero,string"`
		Double jsontext.Value `json:"doubleValue,omitzero"`
		Array  *otlpValues    `json:"arrayValue,omitzero"`
		KVList *otlpKVList    `json:"kvlistValue,omitzero"`
		Bytes  *[]byte        `json:"bytesValue,omitzero"`
	}
	otlpValues struct {
		Values []otlpAny `json:"values"`
	}
	otlpKVList struct {
		Values []otlpKV `json:"values"`
	}
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

// encodeTraces returns the OTLP/JSON ExportTraceServiceRequest holding
// spans, grouped by resource and then by instrumentation scope in the
// order they first appear.
func encodeTraces(spans []sdktrace.ReadOnlySpan) []byte {
	type scopeKey struct {
		res   attribute.Distinct
		scope instrumentation.Scope
	}
	req := otlpRequest{ResourceSpans: []otlpResourceSpans{}}
	byRes := map[attribute.Distinct]int{}
	byScope := map[scopeKey][2]int{}
	for _, s := range spans {
		if s == nil {
			continue
		}
		rk := s.Resource().Equivalent()
		ri, ok := byRes[rk]
		if !ok {
			ri = len(req.ResourceSpans)
			byRes[rk] = ri
			req.ResourceSpans = append(req.ResourceSpans, resourceSpans(s.Resource()))
		}
		sk := scopeKey{rk, s.InstrumentationScope()}
		at, ok := byScope[sk]
		if !ok {
			rs := &req.ResourceSpans[ri]
			at = [2]int{ri, len(rs.ScopeSpans)}
			byScope[sk] = at
			rs.ScopeSpans = append(rs.ScopeSpans, scopeSpans(sk.scope))
		}
		ss := &req.ResourceSpans[at[0]].ScopeSpans[at[1]]
		ss.Spans = append(ss.Spans, spanOf(s))
	}
	// Invalid UTF-8 in a string (a command's bytes) becomes U+FFFD, as
	// receivers require valid strings.
	b, err := json.Marshal(req, jsontext.AllowInvalidUTF8(true))
	if err != nil {
		panic("lifecycle: OTLP request does not encode: " + err.Error()) // plain structs always do
	}
	return b
}

func resourceSpans(res *resource.Resource) otlpResourceSpans {
	rs := otlpResourceSpans{SchemaURL: res.SchemaURL()}
	if res != nil {
		rs.Resource = &otlpResource{Attributes: keyValues(res.Attributes())}
	}
	return rs
}

func scopeSpans(sc instrumentation.Scope) otlpScopeSpans {
	ss := otlpScopeSpans{SchemaURL: sc.SchemaURL}
	if sc != (instrumentation.Scope{}) {
		ss.Scope = &otlpScope{Name: sc.Name, Version: sc.Version, Attributes: keyValues(sc.Attributes.ToSlice())}
	}
	return ss
}

func spanOf(s sdktrace.ReadOnlySpan) otlpSpan {
	sc, parent := s.SpanContext(), s.Parent()
	tid, sid := sc.TraceID(), sc.SpanID()
	out := otlpSpan{
		TraceID: hexID(tid[:]), SpanID: hexID(sid[:]), TraceState: sc.TraceState().String(),
		Flags: spanFlags(sc.TraceFlags(), parent.IsRemote()), Name: s.Name(), Kind: spanKind(s.SpanKind()),
		StartTimeUnixNano: unixNano(s.StartTime()), EndTimeUnixNano: unixNano(s.EndTime()),
		Attributes: keyValues(s.Attributes()), DroppedAttributes: count(s.DroppedAttributes()),
		DroppedEvents: count(s.DroppedEvents()), DroppedLinks: count(s.DroppedLinks()),
	}
	if psid := parent.SpanID(); psid.IsValid() {
		out.ParentSpanID = hexID(psid[:])
	}
	for _, ev := range s.Events() {
		out.Events = append(out.Events, otlpEvent{TimeUnixNano: unixNano(ev.Time), Name: ev.Name,
			Attributes: keyValues(ev.Attributes), DroppedAttributes: count(ev.DroppedAttributeCount)})
	}
	for _, l := range s.Links() {
		ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		out.Links = append(out.Links, otlpLink{TraceID: hexID(ltid[:]), SpanID: hexID(lsid[:]),
			TraceState: l.SpanContext.TraceState().String(), Attributes: keyValues(l.Attributes),
			DroppedAttributes: count(l.DroppedAttributeCount), Flags: spanFlags(l.SpanContext.TraceFlags(), l.SpanContext.IsRemote())})
	}
	if st := s.Status(); st.Code != codes.Unset || st.Description != "" {
		out.Status = &otlpStatus{Message: st.Description, Code: statusCode(st.Code)}
	}
	return out
}

// hexID is an id as OTLP/JSON writes it: hex, not protobuf's base64.
func hexID(id []byte) string { return hex.EncodeToString(id) }

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
		s := v.AsString()
		return otlpAny{String: &s}
	case attribute.BOOL:
		b := v.AsBool()
		return otlpAny{Bool: &b}
	case attribute.INT64:
		i := v.AsInt64()
		return otlpAny{Int: &i}
	case attribute.FLOAT64:
		return otlpAny{Double: double(v.AsFloat64())}
	case attribute.BYTESLICE:
		b := v.AsByteSlice()
		return otlpAny{Bytes: &b}
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
		return otlpAny{KVList: &otlpKVList{Values: keyValues(v.AsMap())}}
	}
	return otlpAny{}
}

func arrayValue[T any](xs []T, value func(T) attribute.Value) otlpAny {
	vs := make([]otlpAny, 0, len(xs))
	for _, x := range xs {
		vs = append(vs, anyValue(value(x)))
	}
	return otlpAny{Array: &otlpValues{Values: vs}}
}

// double is f as protobuf's JSON mapping writes a double: a number, or
// "NaN", "Infinity" and "-Infinity" as strings.
func double(f float64) jsontext.Value {
	switch {
	case math.IsNaN(f):
		return jsontext.Value(`"NaN"`)
	case math.IsInf(f, 1):
		return jsontext.Value(`"Infinity"`)
	case math.IsInf(f, -1):
		return jsontext.Value(`"-Infinity"`)
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64)
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

func spanFlags(tf trace.TraceFlags, remote bool) uint32 {
	f := uint32(tf) | otlpFlagHasIsRemote
	if remote {
		f |= otlpFlagIsRemote
	}
	return f
}

func spanKind(k trace.SpanKind) int {
	// The OTLP numbering matches the Go API's (internal 1 ... consumer 5);
	// anything else is SPAN_KIND_UNSPECIFIED.
	switch k {
	case trace.SpanKindInternal, trace.SpanKindServer, trace.SpanKindClient,
		trace.SpanKindProducer, trace.SpanKindConsumer:
		return int(k)
	}
	return 0
}

func statusCode(c codes.Code) int {
	switch c {
	case codes.Ok:
		return otlpStatusOK
	case codes.Error:
		return otlpStatusError
	}
	return 0
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
	ps := resp.PartialSuccess
	if n := ps.RejectedSpans; len(n) > 0 && string(n) != "null" {
		s := string(n)
		if n.Kind() == '"' {
			s = s[1 : len(s)-1]
		}
		if rejected, err = strconv.ParseInt(s, 10, 64); err != nil {
			return 0, "", err
		}
	}
	return rejected, ps.ErrorMessage, nil
}
