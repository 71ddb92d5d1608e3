package provider

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
)

// retryableStatus reports the statuses that mean the server did not
// handle the request and may take it later (runtime.md §1): 408, 429,
// 500, 502, 503, 504 and 529 (overloaded).
func retryableStatus(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusTooManyRequests,
		http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout, 529:
		return true
	}
	return false
}

// overflowMarkers are what servers say when the prompt does not fit the
// model's context window: OpenAI's code and message, vLLM, llama.cpp,
// Ollama, Anthropic and OpenRouter wordings. Matched on the lower-cased
// error body.
var overflowMarkers = []string{
	"context_length_exceeded",
	"maximum context length",
	"prompt is too long",
	"exceeds the available context size",
	"exceed_context_size",
	"context window",
	"context length",
	"too many tokens",
	"input is too long",
	"reduce the length of the messages",
}

// isContextOverflow reports whether an HTTP 400/413 error body says the
// prompt is too long. A bare 413 is a body the server will not take, which
// only a smaller request fixes, so it counts too.
func isContextOverflow(status int, body []byte) bool {
	switch status {
	case http.StatusRequestEntityTooLarge:
		return true
	case http.StatusBadRequest:
	default:
		return false
	}
	lower := bytes.ToLower(body)
	for _, m := range overflowMarkers {
		if bytes.Contains(lower, []byte(m)) {
			return true
		}
	}
	return false
}

// classifyStatus completes the summary of an HTTP error response with what
// the retry wrapper and the agent decide on: overflow, retryability and
// the server's Retry-After.
func classifyStatus(e *Error, header http.Header, body []byte, now time.Time) {
	switch {
	case isContextOverflow(e.Status, body):
		e.Kind = KindContextOverflow
	case e.Kind == KindQuota:
	case retryableStatus(e.Status):
		e.Retryable = true
		e.RetryAfter = retryAfter(header.Get("Retry-After"), now)
	}
}

// retryAfter parses a Retry-After value: delay seconds or an HTTP date.
// Anything else, or a time in the past, is 0.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		switch {
		case !(n > 0): // NaN too
			return 0
		case n >= 24*3600: // Inf too; no server means a day
			return 24 * time.Hour
		}
		return time.Duration(n * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// classifyInStream completes an error object sent inside a 200 response.
// Before the first streamed event it is as good as a status: the server
// did not answer, so an overload may be retried and an overflow compacts.
func classifyInStream(e *Error, w *ChatError, events int) {
	if events > 0 {
		return
	}
	var code int
	if json.Unmarshal(w.Code, &code) == nil && retryableStatus(code) {
		e.Retryable = true
		e.Status = code
		return
	}
	text := append(append([]byte(nil), w.Code...), w.Message...)
	if isContextOverflow(http.StatusBadRequest, text) {
		e.Kind = KindContextOverflow
	}
}

// markUnanswered marks a failure that happened before any response byte as
// retryable: the connection was refused, reset or could not be made (the
// connect timeout included, the request was never sent). A timeout after
// the request was sent and a name that does not resolve are final.
func markUnanswered(err error) {
	var pe *Error
	if !errors.As(err, &pe) {
		return
	}
	switch pe.Kind {
	case KindConnectionFailed:
		pe.Retryable = !strings.Contains(pe.Message, "no such host")
	case KindTimeout:
		pe.Retryable = strings.HasPrefix(pe.Message, "provider connection timed out")
	}
}

// keyHint tells a user whose key was refused which variable holds it.
func (c *Client) keyHint(e *Error) {
	if e.Status != http.StatusUnauthorized && e.Status != http.StatusForbidden {
		return
	}
	switch {
	case c.apiKey == "" && c.keyVar != "":
		e.Message += " (no API key was sent; set " + c.keyVar + ")"
	case c.apiKey == "":
		e.Message += " (no API key was sent)"
	case c.keyVar != "":
		e.Message += " (check the key in " + c.keyVar + ")"
	}
}
