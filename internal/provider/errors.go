package provider

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tiny-agent/tiny-go/internal/secrets"
)

// maxSummary bounds the provider text quoted in an error message.
const maxSummary = 200

// maxErrorBody bounds how much of an error response is read to find its
// message.
const maxErrorBody = 64 << 10

// redacted replaces the API key wherever it appears.
const redacted = "[redacted]"

// statusError summarizes an HTTP error response. Only the message field of
// a JSON error body (or the start of a plain-text body) is quoted, cut to
// maxSummary runes; HTML and other bodies are never quoted.
func statusError(status int, contentType string, body []byte, apiKey string) *Error {
	e := &Error{Kind: KindHTTPStatus, Status: status}
	if status == http.StatusTooManyRequests {
		e.Kind = KindRateLimited
	}
	e.Message = fmt.Sprintf("provider returned HTTP %d", status)
	switch {
	case status == http.StatusTooManyRequests && QuotaExhausted(body):
		e.Kind = KindQuota
		e.Message += " (insufficient quota: check the account's plan and billing)"
	case status == http.StatusTooManyRequests:
		e.Message += " (rate limited)"
	}
	if msg := sanitize(bodyMessage(contentType, body), apiKey, maxSummary); msg != "" {
		e.Message += ": " + msg
	}
	return e
}

// QuotaExhausted reports an error body that says the account has no
// credit left (OpenAI sends it as HTTP 429 with code insufficient_quota):
// waiting does not help, so it is never retried.
func QuotaExhausted(body []byte) bool {
	return bytes.Contains(body, []byte("insufficient_quota"))
}

// bodyMessage extracts the human-readable message of an error body.
func bodyMessage(contentType string, body []byte) string {
	mediaType, _, _ := strings.Cut(contentType, ";")
	mediaType = strings.ToLower(strings.TrimSpace(mediaType))
	trimmed := strings.TrimSpace(string(body))
	switch {
	case strings.HasPrefix(trimmed, "{"):
		return jsonMessage(body)
	case mediaType == "text/plain":
		first, _, _ := strings.Cut(trimmed, "\n")
		return first
	}
	return ""
}

// jsonMessage finds error.message, error (a string) or message in a JSON
// error body; servers disagree on the shape.
func jsonMessage(body []byte) string {
	var v struct {
		Error   jsontext.Value `json:"error"`
		Message jsontext.Value `json:"message"`
		Detail  jsontext.Value `json:"detail"`
	}
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	var nested struct {
		Message string `json:"message"`
	}
	var s string
	switch {
	case len(v.Error) > 0 && json.Unmarshal(v.Error, &nested) == nil && nested.Message != "":
		return nested.Message
	case len(v.Error) > 0 && json.Unmarshal(v.Error, &s) == nil && s != "":
		return s
	case len(v.Message) > 0 && json.Unmarshal(v.Message, &s) == nil && s != "":
		return s
	case len(v.Detail) > 0 && json.Unmarshal(v.Detail, &s) == nil && s != "":
		return s
	}
	return ""
}

// streamError converts an error object sent with HTTP 200 (inside a stream
// or as the whole JSON reply).
func streamError(w *ChatError, apiKey string) *Error {
	e := &Error{Kind: KindProviderError, Message: "provider reported an error"}
	var code int
	if json.Unmarshal(w.Code, &code) == nil && code == http.StatusTooManyRequests {
		e.Kind = KindRateLimited
		e.Status = code
		e.Message += " (rate limited)"
	}
	if msg := sanitize(w.Message, apiKey, maxSummary); msg != "" {
		e.Message += ": " + msg
	}
	return e
}

// sanitize makes provider text safe for a one-line error message: the API
// key is removed, control characters and runs of white space become one
// space, invalid UTF-8 is dropped, and the result is cut to limit runes.
func sanitize(s, apiKey string, limit int) string {
	// Scrub all of s before cutting it, so no piece of the key survives
	// at the cut.
	s = strings.ToValidUTF8(s, "")
	s = scrub(s, apiKey)
	var b strings.Builder
	space, runes := false, 0
	for _, r := range strings.TrimSpace(s) {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == utf8.RuneError {
			space = true
			continue
		}
		if runes == limit {
			b.WriteString("…")
			break
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
			runes++
			if runes == limit {
				b.WriteString("…")
				break
			}
		}
		space = false
		b.WriteRune(r)
		runes++
	}
	// Removing characters can join pieces of the key back together.
	return scrub(b.String(), apiKey)
}

// scrub removes every occurrence of the API key. If a replacement
// happens to recreate it, nothing of s is kept. A key too short to be a
// pattern (secrets.MinLen) is left alone: it would redact ordinary words.
func scrub(s, apiKey string) string {
	if !secrets.Maskable(apiKey) || !strings.Contains(s, apiKey) {
		return s
	}
	s = strings.ReplaceAll(s, apiKey, redacted)
	if strings.Contains(s, apiKey) {
		return redacted
	}
	return s
}
