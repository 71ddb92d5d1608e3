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

// OpenAI's refusal field (in place of content) is shown as the reply's
// text and makes the reply a refusal.
func TestChatRefusalField(t *testing.T) {
	body := "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"refusal\":\"I can't\"}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\" help.\"}}]}\n\n" +
		"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	srv := providertest.New(t, providertest.Reply{Body: body})
	r, text, err := stream(t, newClient(t, srv, provider.Config{}))
	if err != nil || r.FinishReason != provider.FinishRefusal || r.StopDetail != "refusal" || *r.Content != "I can't help." || strings.Join(text, "") != "I can't help." {
		t.Fatalf("%+v %q %v", r, text, err)
	}
}
