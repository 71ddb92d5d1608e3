package lifecycle

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// collector is a real OTLP/HTTP protobuf trace receiver on loopback.
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
		req := &coltracepb.ExportTraceServiceRequest{}
		if err := proto.Unmarshal(body, req); err != nil || r.Header.Get("Content-Type") != "application/x-protobuf" {
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
		resp, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.Write(resp)
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
