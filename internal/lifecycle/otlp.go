package lifecycle

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"mime"
	"net/http"
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

// otlpExporter is a sdktrace.SpanExporter that POSTs each batch as an
// OTLP/HTTP JSON ExportTraceServiceRequest (encodeTraces); why not the
// official otlptracehttp: see doc.go. Its errors never quote the URL,
// the headers or the collector's reply.
type otlpExporter struct {
	url    string
	header http.Header // set.headers (never logged) and ours
	gzip   bool
	client *http.Client
	retry  retryPolicy
	// done is cancelled by Shutdown and interrupts requests in flight.
	done     context.Context
	shutdown context.CancelFunc
}

// retryPolicy: a request that failed to connect or got a 429, 502, 503 or
// 504 is sent again after the longer of a jittered exponential backoff and
// the collector's Retry-After, if that starts within budget of the first.
type retryPolicy struct {
	initial, max time.Duration // backoff before jitter
	budget       time.Duration
}

const userAgent = "tiny-go OTLP/HTTP trace exporter"

func newOTLPExporter(set otelSettings, client *http.Client, retry retryPolicy) (*otlpExporter, error) {
	// Fail at setup, not on every export, if the URL cannot make a request.
	if _, err := http.NewRequest(http.MethodPost, set.endpoint, http.NoBody); err != nil {
		return nil, errors.New("lifecycle: unusable OTLP endpoint") // err quotes the URL
	}
	header := http.Header{"User-Agent": {userAgent}}
	for k, v := range set.headers {
		header.Set(k, v)
	}
	header.Set("Content-Type", "application/json")
	if set.gzip {
		header.Set("Content-Encoding", "gzip")
	}
	done, cancel := context.WithCancel(context.Background())
	return &otlpExporter{url: set.endpoint, header: header, gzip: set.gzip, client: client, retry: retry, done: done, shutdown: cancel}, nil
}

// ExportSpans sends spans in one request, retrying as retryPolicy says,
// until ctx or Shutdown ends it.
func (e *otlpExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	if e.done.Err() != nil {
		return errors.New("lifecycle: OTLP exporter is shut down")
	}
	body := encodeTraces(spans)
	if e.gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(body) // writing to a bytes.Buffer cannot fail
		_ = zw.Close()
		body = buf.Bytes()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(e.done, cancel)()
	return e.send(ctx, body)
}

// Shutdown interrupts requests in flight and refuses later exports. The
// batch processor flushes before it calls Shutdown.
func (e *otlpExporter) Shutdown(context.Context) error {
	e.shutdown()
	e.client.CloseIdleConnections()
	return nil
}

func (e *otlpExporter) send(ctx context.Context, body []byte) error {
	start := time.Now()
	for attempt := 1; ; attempt++ {
		err := e.post(ctx, body)
		re, ok := errors.AsType[*retryableError](err)
		if !ok {
			return err
		}
		delay := max(e.retry.backoff(attempt-1), re.after)
		if ctx.Err() == nil && time.Since(start)+delay > e.retry.budget {
			return fmt.Errorf("lifecycle: OTLP export gave up after %d attempt(s): %w", attempt, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("lifecycle: OTLP export interrupted: %w", ctx.Err())
		case <-time.After(delay):
		}
	}
}

// backoff is the wait before retry number attempt+1: initial growing by
// half each time up to max, then jittered to between half and one and a
// half of that so that clients do not retry in step.
func (p retryPolicy) backoff(attempt int) time.Duration {
	d := min(float64(p.initial)*math.Pow(1.5, float64(attempt)), float64(p.max))
	return time.Duration(d * (0.5 + rand.Float64()))
}

func (e *otlpExporter) post(ctx context.Context, body []byte) error {
	// newOTLPExporter made a request of the URL: this one cannot fail.
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	req.Header = e.header.Clone()
	resp, err := e.client.Do(req)
	if err != nil {
		// Retried (refused connections, the client's timeout) unless ctx ended it.
		var t interface{ Timeout() bool }
		if errors.As(err, &t) && t.Timeout() {
			return &retryableError{"lifecycle: OTLP request timed out", err, 0}
		}
		return &retryableError{"lifecycle: OTLP request failed", err, 0}
	}
	defer resp.Body.Close()
	// Enough for any partial-success message; draining it reuses the connection.
	reply, readErr := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	switch code := resp.StatusCode; {
	case code/100 == 2:
		// An accepted export does not fail or repeat for a broken reply.
		ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		if readErr != nil || ct != "application/json" {
			return nil // empty, or a protobuf reply we do not read
		}
		if rejected, msg, err := parsePartialSuccess(reply); err == nil && (rejected != 0 || msg != "") {
			return fmt.Errorf("lifecycle: collector rejected %d span(s)", rejected)
		}
		return nil
	case code == http.StatusTooManyRequests, code == http.StatusBadGateway,
		code == http.StatusServiceUnavailable, code == http.StatusGatewayTimeout:
		after := retryAfter(resp.Header.Get("Retry-After"), time.Now())
		return &retryableError{fmt.Sprintf("lifecycle: collector answered HTTP %d", code), nil, after}
	}
	return fmt.Errorf("lifecycle: collector answered HTTP %d", resp.StatusCode)
}

// retryableError is a failed request that may succeed if sent again,
// after the collector's Retry-After if it gave one. Its text does not
// quote its cause (which names the endpoint); errors.Is sees the cause
// (e.g. context.DeadlineExceeded).
type retryableError struct {
	msg   string
	err   error
	after time.Duration
}

func (e *retryableError) Error() string { return e.msg }
func (e *retryableError) Unwrap() error { return e.err }

// retryAfter parses a Retry-After value, delay-seconds or an HTTP date
// (RFC 9110 §10.2.3), as the wait from now; 0 if absent or invalid.
func retryAfter(v string, now time.Time) time.Duration {
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Duration(min(max(s, 0), 86400)) * time.Second // a day: the budget ends the export long before
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// An ExportTraceServiceRequest in OTLP's JSON encoding (the OTLP
// specification, "JSON Protobuf Encoding"): protobuf's JSON mapping with
// lowerCamelCase names, except that trace and span ids are hex and enums
// numbers; 64-bit integers are strings. Unexported fields are not sent.
type (
	otlpRequest struct {
		ResourceSpans []otlpResourceSpans `json:"resourceSpans"`
	}
	otlpResourceSpans struct {
		Resource   otlpResource     `json:"resource"`
		ScopeSpans []otlpScopeSpans `json:"scopeSpans"`
		SchemaURL  string           `json:"schemaUrl,omitzero"`
		key        attribute.Distinct
	}
	otlpResource struct {
		Attributes []otlpKV `json:"attributes,omitzero"`
	}
	otlpScopeSpans struct {
		Scope     otlpScope  `json:"scope"`
		Spans     []otlpSpan `json:"spans"`
		SchemaURL string     `json:"schemaUrl,omitzero"`
		key       instrumentation.Scope
	}
	otlpScope struct {
		Name       string   `json:"name,omitzero"`
		Version    string   `json:"version,omitzero"`
		Attributes []otlpKV `json:"attributes,omitzero"`
	}
	// otlpSpan is a Span: what it shares with a Span.Link, then the rest.
	otlpSpan struct {
		otlpLink
		ParentSpanID      string      `json:"parentSpanId,omitzero"`
		Name              string      `json:"name"`
		Kind              int         `json:"kind,omitzero"`
		StartTimeUnixNano uint64      `json:"startTimeUnixNano,omitzero,string"`
		EndTimeUnixNano   uint64      `json:"endTimeUnixNano,omitzero,string"`
		Events            []otlpEvent `json:"events,omitzero"`
		DroppedEvents     int         `json:"droppedEventsCount,omitzero"`
		Links             []otlpLink  `json:"links,omitzero"`
		DroppedLinks      int         `json:"droppedLinksCount,omitzero"`
		Status            *otlpStatus `json:"status,omitzero"`
	}
	otlpLink struct {
		TraceID           string   `json:"traceId"`
		SpanID            string   `json:"spanId"`
		TraceState        string   `json:"traceState,omitzero"`
		Flags             uint32   `json:"flags,omitzero"`
		Attributes        []otlpKV `json:"attributes,omitzero"`
		DroppedAttributes int      `json:"droppedAttributesCount,omitzero"`
	}
	otlpEvent struct {
		TimeUnixNano      uint64   `json:"timeUnixNano,omitzero,string"`
		Name              string   `json:"name,omitzero"`
		Attributes        []otlpKV `json:"attributes,omitzero"`
		DroppedAttributes int      `json:"droppedAttributesCount,omitzero"`
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

// otlpStatusCode is OTLP's number for a status code (the Go API's differ).
var otlpStatusCode = map[codes.Code]int{codes.Ok: 1, codes.Error: 2}

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
			req.ResourceSpans = append(req.ResourceSpans, otlpResourceSpans{SchemaURL: res.SchemaURL(), key: res.Equivalent(),
				Resource: otlpResource{Attributes: keyValues(res.Attributes())}})
		}
		rs := &req.ResourceSpans[i]
		j := slices.IndexFunc(rs.ScopeSpans, func(ss otlpScopeSpans) bool { return ss.key == scope })
		if j < 0 {
			j = len(rs.ScopeSpans)
			rs.ScopeSpans = append(rs.ScopeSpans, otlpScopeSpans{SchemaURL: scope.SchemaURL, key: scope,
				Scope: otlpScope{Name: scope.Name, Version: scope.Version, Attributes: keyValues(scope.Attributes.ToSlice())}})
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
	parent := s.Parent()
	out := otlpSpan{
		otlpLink: linkOf(s.SpanContext(), parent.IsRemote(), s.Attributes(), s.DroppedAttributes()),
		Name:     s.Name(), Kind: int(s.SpanKind()), // the SDK's kinds are valid, numbered as OTLP numbers them
		StartTimeUnixNano: unixNano(s.StartTime()), EndTimeUnixNano: unixNano(s.EndTime()),
		DroppedEvents: s.DroppedEvents(), DroppedLinks: s.DroppedLinks(),
	}
	if psid := parent.SpanID(); psid.IsValid() {
		out.ParentSpanID = hex.EncodeToString(psid[:])
	}
	for _, ev := range s.Events() {
		out.Events = append(out.Events, otlpEvent{TimeUnixNano: unixNano(ev.Time), Name: ev.Name,
			Attributes: keyValues(ev.Attributes), DroppedAttributes: ev.DroppedAttributeCount})
	}
	for _, l := range s.Links() {
		out.Links = append(out.Links, linkOf(l.SpanContext, l.SpanContext.IsRemote(), l.Attributes, l.DroppedAttributeCount))
	}
	if st := s.Status(); st.Code != codes.Unset || st.Description != "" {
		out.Status = &otlpStatus{Message: st.Description, Code: otlpStatusCode[st.Code]}
	}
	return out
}

// linkOf is what a span or link says of span context sc. Its flags are
// the W3C trace flags (bits 0-7) and whether the parent (or linked) span
// context is remote: 0x100 says that is known, 0x200 that it is.
func linkOf(sc trace.SpanContext, remote bool, attrs []attribute.KeyValue, dropped int) otlpLink {
	tid, sid := sc.TraceID(), sc.SpanID()
	l := otlpLink{TraceID: hex.EncodeToString(tid[:]), SpanID: hex.EncodeToString(sid[:]), TraceState: sc.TraceState().String(),
		Flags: uint32(sc.TraceFlags()) | 0x100, Attributes: keyValues(attrs), DroppedAttributes: dropped}
	if remote {
		l.Flags |= 0x200
	}
	return l
}

func keyValues(kvs []attribute.KeyValue) []otlpKV {
	out := make([]otlpKV, 0, len(kvs))
	for _, kv := range kvs {
		out = append(out, otlpKV{Key: string(kv.Key), Value: anyValue(kv.Value)})
	}
	return out
}

// anyValue is v as an AnyValue: slices an array of AnyValues, maps a
// key-value list, an empty or unknown value no member.
func anyValue(v attribute.Value) otlpAny {
	switch v.Type() {
	case attribute.STRING:
		return otlpAny{"stringValue": v.AsString()}
	case attribute.BOOL:
		return otlpAny{"boolValue": v.AsBool()}
	case attribute.INT64:
		return otlpAny{"intValue": strconv.FormatInt(v.AsInt64(), 10)}
	case attribute.FLOAT64:
		if f := v.AsFloat64(); math.IsNaN(f) || math.IsInf(f, 0) { // protobuf's JSON: "NaN", "Infinity", "-Infinity"
			return otlpAny{"doubleValue": strings.NewReplacer("+Inf", "Infinity", "-Inf", "-Infinity").Replace(strconv.FormatFloat(f, 'g', -1, 64))}
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
// the zero time and anything else before the epoch (Sub saturates).
func unixNano(t time.Time) uint64 { return uint64(max(t.Sub(time.Unix(0, 0)), 0)) }

// parsePartialSuccess reads partial_success (rejectedSpans, a number or a
// string, and errorMessage) from an OTLP/JSON ExportTraceServiceResponse.
func parsePartialSuccess(b []byte) (rejected int64, msg string, err error) {
	var resp struct {
		PartialSuccess struct {
			RejectedSpans jsontext.Value `json:"rejectedSpans"`
			ErrorMessage  string         `json:"errorMessage"`
		} `json:"partialSuccess"`
	}
	err = json.Unmarshal(b, &resp, json.RejectUnknownMembers(false))
	if n := string(resp.PartialSuccess.RejectedSpans); err == nil && n != "" && n != "null" {
		rejected, err = strconv.ParseInt(strings.Trim(n, `"`), 10, 64)
	}
	return rejected, resp.PartialSuccess.ErrorMessage, err
}
