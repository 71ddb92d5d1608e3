package provider_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// OpenAI's insufficient_quota comes as HTTP 429 but waiting does not help:
// one send, one line with the provider's message, no retry.
func TestInsufficientQuotaIsNotRetried(t *testing.T) {
	body := `{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`
	srv := providertest.New(t,
		providertest.Reply{Status: http.StatusTooManyRequests, Body: body, ContentType: "application/json"},
		providertest.Reply{Text: "never sent"},
	)
	var w waits
	_, _, err := retryStream(t, provider.Retry(newClient(t, srv, provider.Config{}), w.config()), &w)
	pe := providerError(t, err, provider.KindQuota)
	if pe.Retryable || len(w.slept) != 0 || len(srv.Requests()) != 1 {
		t.Fatalf("retried: %d sends, waits %v", len(srv.Requests()), w.slept)
	}
	if !strings.Contains(pe.Message, "insufficient quota") || !strings.Contains(pe.Message, "You exceeded your current quota") || strings.Contains(pe.Message, "\n") {
		t.Fatalf("message %q", pe.Message)
	}
}
