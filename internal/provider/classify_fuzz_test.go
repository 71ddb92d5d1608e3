package provider

import (
	"net/http"
	"testing"
	"time"
)

func FuzzRetryAfter(f *testing.F) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	for _, s := range []string{"1", "0", "-3", "1.5", "120", "1e9", "NaN", "Inf", "Wed, 03 Dec 2026 12:00:30 GMT", "Wed, 03 Dec 2025 12:00:30 GMT", "soon", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		d := retryAfter(v, now)
		if d < 0 || d > 24*time.Hour && !isHTTPDate(v) {
			t.Fatalf("retryAfter(%q) = %v", v, d)
		}
	})
}

func isHTTPDate(v string) bool {
	_, err := http.ParseTime(v)
	return err == nil
}

func FuzzContextLength(f *testing.F) {
	f.Add([]byte(`{"data":[{"id":"m","context_length":128000}]}`), "m")
	f.Add([]byte(`{"data":[{"id":"m","top_provider":{"context_length":200000}}]}`), "m")
	f.Add([]byte(`{"data":[{"id":"m","max_model_len":4096}]}`), "m")
	f.Add([]byte(`{"object":"list","data":[]}`), "m")
	f.Add([]byte(`[1,2]`), "")
	f.Fuzz(func(t *testing.T, body []byte, model string) {
		n, err := contextLength(body, model)
		if (err == nil) != (n > 0) {
			t.Fatalf("contextLength = %d, %v", n, err)
		}
	})
}

func FuzzIsContextOverflow(f *testing.F) {
	f.Add(400, []byte(`{"error":{"code":"context_length_exceeded"}}`))
	f.Add(413, []byte(``))
	f.Add(429, []byte(`maximum context length`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		if isContextOverflow(status, body) && status != 400 && status != 413 {
			t.Fatalf("status %d taken for an overflow", status)
		}
	})
}
