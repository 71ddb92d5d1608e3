package responses_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/provider/responses"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

func newClient(t *testing.T, srv *providertest.Server) provider.Provider {
	t.Helper()
	c, err := responses.New(responses.Config{Transport: provider.Config{Endpoint: srv.URL(), APIKey: "sk-test-SECRET-0123456789"}})
	if err != nil {
		t.Fatal(err)
	}
	return provider.Retry(c, provider.RetryConfig{Sleep: func(context.Context, time.Duration) error { return nil }})
}

func request() provider.Request {
	hi := "hi"
	return provider.Request{Model: "gpt-5.1", Messages: []provider.Message{{Role: provider.RoleUser, Content: &hi}}}
}

// Over HTTP: POST {endpoint}/responses with the bearer key; a streamed
// reply settles.
func TestClientPostsToResponses(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Text: "hello", Usage: &providertest.Usage{PromptTokens: 10, CompletionTokens: 2}})
	resp, err := newClient(t, srv).Stream(t.Context(), request(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if *resp.Content != "hello" || resp.FinishReason != provider.FinishStop || resp.Usage.Input != 10 || resp.Usage.Cost == nil {
		t.Fatalf("reply %+v", resp)
	}
	r := srv.Requests()[0]
	if !strings.HasSuffix(r.Path, "/v1/responses") && !strings.HasSuffix(r.Path, "/responses") || r.Header.Get("Authorization") != "Bearer sk-test-SECRET-0123456789" {
		t.Fatalf("request %s %v", r.Path, r.Header)
	}
}

// Errors: an invalid request or a quota gives one line with the
// provider's message and no retry; an error event before any output for
// a rate limit is sent again.
func TestClientErrors(t *testing.T) {
	body := `{"error":{"message":"Invalid value: 'foo'. Supported values are: 'auto'.","type":"invalid_request_error","param":"tool_choice","code":"invalid_value"}}`
	srv := providertest.New(t, providertest.Reply{Status: http.StatusBadRequest, Body: body, ContentType: "application/json"})
	_, err := newClient(t, srv).Stream(t.Context(), request(), nil)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Retryable || !strings.Contains(pe.Message, "HTTP 400: Invalid value: 'foo'.") || len(srv.Requests()) != 1 {
		t.Fatalf("err %v after %d requests", err, len(srv.Requests()))
	}

	srv = providertest.New(t,
		providertest.Reply{StreamError: "Rate limit reached.", StreamErrorType: "rate_limit_exceeded"},
		providertest.Reply{Text: "after the wait"},
	)
	resp, err := newClient(t, srv).Stream(t.Context(), request(), nil)
	if err != nil || *resp.Content != "after the wait" || len(srv.Requests()) != 2 {
		t.Fatalf("rate limit: %v, %d requests", err, len(srv.Requests()))
	}

	srv = providertest.New(t, providertest.Reply{StreamError: "You exceeded your current quota.", StreamErrorType: "insufficient_quota"}, providertest.Reply{Text: "never"})
	_, err = newClient(t, srv).Stream(t.Context(), request(), nil)
	if !errors.As(err, &pe) || pe.Kind != provider.KindQuota || len(srv.Requests()) != 1 || !strings.Contains(pe.Message, "You exceeded your current quota.") {
		t.Fatalf("quota: %v after %d requests", err, len(srv.Requests()))
	}
}
