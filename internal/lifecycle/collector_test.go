package lifecycle

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// collector is a real OTLP/HTTP JSON trace receiver on loopback.
type collector struct {
	srv *httptest.Server

	mu      sync.Mutex
	raw     [][]byte // decompressed request bodies
	reqs    []*coltracepb.ExportTraceServiceRequest
	headers []http.Header
	paths   []string
}

// newCollector starts a receiver. When hang is non-nil every request
// blocks until hang is closed or the client gives up.
func newCollector(t *testing.T, hang chan struct{}) *collector {
	t.Helper()
	c := &collector{}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hang != nil {
			select {
			case <-hang:
			case <-r.Context().Done():
			}
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err == nil {
				body, err = io.ReadAll(zr)
			}
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
		}
		req, err := decodeOTLP(body)
		if err != nil || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("collector: bad request (%v), content type %q", err, r.Header.Get("Content-Type"))
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		c.raw = append(c.raw, body)
		c.reqs = append(c.reqs, req)
		c.headers = append(c.headers, r.Header.Clone())
		c.paths = append(c.paths, r.URL.Path)
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("{}"))
	}))
	t.Cleanup(c.srv.Close)
	if hang != nil {
		t.Cleanup(func() { close(hang) }) // runs before srv.Close
	}
	return c
}

// exported is one received span with its resource and scope.
type exported struct {
	resource map[string]*commonpb.AnyValue
	scope    string
	span     *tracepb.Span
}

func (c *collector) spans() []exported {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []exported
	for _, req := range c.reqs {
		for _, rs := range req.GetResourceSpans() {
			res := attrMap(rs.GetResource().GetAttributes())
			for _, ss := range rs.GetScopeSpans() {
				for _, sp := range ss.GetSpans() {
					out = append(out, exported{resource: res, scope: ss.GetScope().GetName(), span: sp})
				}
			}
		}
	}
	return out
}

func (c *collector) body() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return bytes.Join(c.raw, nil)
}

func attrMap(kvs []*commonpb.KeyValue) map[string]*commonpb.AnyValue {
	m := map[string]*commonpb.AnyValue{}
	for _, kv := range kvs {
		m[kv.GetKey()] = kv.GetValue()
	}
	return m
}

// decodeOTLP reads an OTLP/JSON ExportTraceServiceRequest with the
// official generated types: protojson, once the hex trace and span ids
// (OTLP/JSON's one departure from protobuf's JSON mapping) are base64.
func decodeOTLP(body []byte) (*coltracepb.ExportTraceServiceRequest, error) {
	var doc any
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, err
	}
	if err := hexIDsToBase64(doc); err != nil {
		return nil, err
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	req := &coltracepb.ExportTraceServiceRequest{}
	return req, protojson.Unmarshal(b, req)
}

func hexIDsToBase64(v any) error {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && (k == "traceId" || k == "spanId" || k == "parentSpanId") {
				raw, err := hex.DecodeString(s)
				if err != nil {
					return fmt.Errorf("%s %q is not hex: %w", k, s, err)
				}
				v[k] = base64.StdEncoding.EncodeToString(raw)
				continue
			}
			if err := hexIDsToBase64(x); err != nil {
				return err
			}
		}
	case []any:
		for _, x := range v {
			if err := hexIDsToBase64(x); err != nil {
				return err
			}
		}
	}
	return nil
}
