package provider

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSanitize(t *testing.T) {
	const key = "sk-secret"
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"  line one\n\tline two\r\n", "line one line two"},
		{"bad key sk-secret here", "bad key [redacted] here"},
		{"joined sk-se\xffcret by invalid UTF-8", "joined [redacted] by invalid UTF-8"},
		{"bell\x07and\x00nul", "bell and nul"},
		{strings.Repeat("é", 250), strings.Repeat("é", 200) + "…"},
	}
	for _, tt := range tests {
		if got := sanitize(tt.in, key, 200); got != tt.want {
			t.Errorf("sanitize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// The key is removed even beyond the part that is kept.
	long := strings.Repeat(" ", 5000) + "x" + key
	if got := sanitize(long, key, 200); strings.Contains(got, "sk-") {
		t.Errorf("sanitize kept part of the key: %q", got)
	}
	// A replacement that recreates the key drops the text.
	if got := sanitize("[redacted]yyyyyyyyyyyyyy", "]yyyyyyy", 200); strings.Contains(got, "]yyyyyyy") {
		t.Errorf("sanitize = %q", got)
	}
	// A key too short to be a pattern is left alone: it would redact
	// ordinary words.
	if got := sanitize("key k is not known", "k", 200); got != "key k is not known" {
		t.Errorf("sanitize with a one-character key = %q", got)
	}
}

func TestStatusError(t *testing.T) {
	tests := []struct {
		status      int
		contentType string
		body        string
		want        string
	}{
		{500, "application/json", `{"error":{"message":"boom","type":"server_error"}}`, "provider returned HTTP 500: boom"},
		{400, "application/json", `{"error":"bad request body"}`, "provider returned HTTP 400: bad request body"},
		{404, "application/json", `{"message":"no such model"}`, "provider returned HTTP 404: no such model"},
		{422, "application/json", `{"detail":"unprocessable"}`, "provider returned HTTP 422: unprocessable"},
		{500, "application/json", `{"error":{"code":1}}`, "provider returned HTTP 500"},
		{502, "text/html", "<html>Bad gateway</html>", "provider returned HTTP 502"},
		{503, "text/plain; charset=utf-8", "overloaded\nsecond line", "provider returned HTTP 503: overloaded"},
		{429, "", `{"error":{"message":"slow down"}}`, "provider returned HTTP 429 (rate limited): slow down"},
		{500, "application/json", `{"error":`, "provider returned HTTP 500"},
	}
	for _, tt := range tests {
		e := statusError(tt.status, tt.contentType, []byte(tt.body), "k")
		if e.Message != tt.want || e.Status != tt.status {
			t.Errorf("statusError(%d, %q) = %+v, want %q", tt.status, tt.body, e, tt.want)
		}
	}
}

// checkMessage asserts the properties every error message has.
func checkMessage(t *testing.T, msg, key string) {
	t.Helper()
	if key != "" && strings.Contains(msg, key) {
		t.Fatalf("message contains the key: %q", msg)
	}
	if strings.ContainsAny(msg, "\r\n") || !utf8.ValidString(msg) {
		t.Fatalf("message is not one valid line: %q", msg)
	}
	if n := utf8.RuneCountInString(msg); n > 300 {
		t.Fatalf("message has %d runes", n)
	}
}

func FuzzStatusError(f *testing.F) {
	f.Add(500, "application/json", []byte(`{"error":{"message":"boom KEY12345"}}`))
	f.Add(429, "text/plain", []byte("KEY1\x002345 too many"))
	f.Add(400, "application/json", []byte(`{"error":"x","message":"y"}`))
	f.Add(502, "text/html", []byte("<html>"))
	f.Fuzz(func(t *testing.T, status int, contentType string, body []byte) {
		const key = "KEY12345"
		e := statusError(status, contentType, body, key)
		checkMessage(t, e.Message, key)
	})
}
