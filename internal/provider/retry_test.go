package provider_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// waits records the announced waits and sleeps for real only when asked.
type waits struct {
	announced []provider.RetryWait
	slept     []time.Duration
}

func (w *waits) config() provider.RetryConfig {
	return provider.RetryConfig{
		Sleep: func(ctx context.Context, d time.Duration) error {
			w.slept = append(w.slept, d)
			return ctx.Err()
		},
		Jitter: func() float64 { return 0.5 },
	}
}

func retryStream(t *testing.T, p provider.Provider, w *waits) (provider.Response, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var text strings.Builder
	r, err := p.Stream(ctx, simpleRequest(), func(d provider.Delta) {
		if d.Retry != nil {
			w.announced = append(w.announced, *d.Retry)
			return
		}
		text.WriteString(d.Content)
	})
	return r, text.String(), err
}

func TestRetryResendsRequestsThatBroughtNoReply(t *testing.T) {
	overloaded := `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`
	cases := []struct {
		name      string
		first     providertest.Reply
		wantDelay time.Duration
		wantLine  string
	}{
		{"429 with Retry-After: 1", providertest.Reply{Status: 429, RetryAfter: "1"}, time.Second, "retrying in 1s: HTTP 429"},
		{"503", providertest.Reply{Status: 503}, 750 * time.Millisecond, "retrying in 1s: HTTP 503"},
		{"529 overloaded", providertest.Reply{Status: 529, Body: overloaded}, 750 * time.Millisecond, "retrying in 1s: HTTP 529"},
		{"connection reset before any byte", providertest.Reply{Cut: true}, 750 * time.Millisecond, "retrying in 1s: connection failed"},
		{"rate-limit error as the first stream event", providertest.Reply{Body: "data: {\"error\":{\"code\":429,\"message\":\"busy\"}}\n\n"}, 750 * time.Millisecond, "retrying in 1s: HTTP 429"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := providertest.New(t, tc.first, providertest.Reply{Text: "hello"})
			w := &waits{}
			p := provider.Retry(newClient(t, srv, provider.Config{}), w.config())
			r, text, err := retryStream(t, p, w)
			if err != nil {
				t.Fatalf("Stream: %v", err)
			}
			if *r.Content != "hello" || text != "hello" {
				t.Fatalf("reply %q, deltas %q", *r.Content, text)
			}
			if n := len(srv.Requests()); n != 2 {
				t.Fatalf("%d requests, want 2", n)
			}
			if len(w.announced) != 1 || w.announced[0].Delay != tc.wantDelay || w.announced[0].String() != tc.wantLine {
				t.Fatalf("announced %+v, want one wait of %v shown as %q", w.announced, tc.wantDelay, tc.wantLine)
			}
			if len(w.slept) != 1 || w.slept[0] != tc.wantDelay {
				t.Fatalf("slept %v", w.slept)
			}
		})
	}
}

func TestRetryDoesNotResendWhatHadAnAnswer(t *testing.T) {
	overflow := `{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`
	cases := []struct {
		name  string
		reply providertest.Reply
		kind  string
	}{
		{"stream broken after its first event", providertest.Reply{Text: "partial answer", Cut: true, After: 1}, provider.KindConnectionFailed},
		{"context overflow 400", providertest.Reply{Status: 400, Body: overflow}, provider.KindContextOverflow},
		{"plain 400", providertest.Reply{Status: 400}, provider.KindHTTPStatus},
		{"401", providertest.Reply{Status: 401}, provider.KindHTTPStatus},
		{"error event after text", providertest.Reply{Text: "abc", StreamError: "upstream overloaded"}, provider.KindProviderError},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := providertest.New(t, tc.reply, providertest.Reply{Text: "must not be asked for"})
			w := &waits{}
			p := provider.Retry(newClient(t, srv, provider.Config{}), w.config())
			_, _, err := retryStream(t, p, w)
			pe := providerError(t, err, tc.kind)
			if pe.Retryable {
				t.Errorf("error marked retryable: %+v", pe)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Fatalf("%d requests, want 1 (not re-sent)", n)
			}
			if len(w.announced) != 0 {
				t.Fatalf("announced waits %+v", w.announced)
			}
		})
	}
}

func TestRetryLimits(t *testing.T) {
	t.Run("at most 6 sends", func(t *testing.T) {
		var replies []providertest.Reply
		for range 7 {
			replies = append(replies, providertest.Reply{Status: 503})
		}
		srv := providertest.New(t, replies...)
		w := &waits{}
		p := provider.Retry(newClient(t, srv, provider.Config{}), w.config())
		_, _, err := retryStream(t, p, w)
		pe := providerError(t, err, provider.KindHTTPStatus)
		if n := len(srv.Requests()); n != 6 {
			t.Fatalf("%d sends, want 6", n)
		}
		if !strings.Contains(pe.Message, "gave up after 6 sends") || pe.Retryable {
			t.Fatalf("error %+v", pe)
		}
		// Exponential: 1, 2, 4, 8, 16 s steps at jitter 0.5 -> 3/4 of each.
		want := []time.Duration{750 * time.Millisecond, 1500 * time.Millisecond, 3 * time.Second, 6 * time.Second, 12 * time.Second}
		if len(w.slept) != len(want) {
			t.Fatalf("slept %v, want %v", w.slept, want)
		}
		for i := range want {
			if w.slept[i] != want[i] {
				t.Fatalf("slept %v, want %v", w.slept, want)
			}
		}
	})
	t.Run("a Retry-After past the 2 minute budget is not waited for", func(t *testing.T) {
		srv := providertest.New(t, providertest.Reply{Status: 429, RetryAfter: "600"}, providertest.Reply{Text: "late"})
		w := &waits{}
		p := provider.Retry(newClient(t, srv, provider.Config{}), w.config())
		_, _, err := retryStream(t, p, w)
		pe := providerError(t, err, provider.KindRateLimited)
		if !strings.Contains(pe.Message, "the server asked to wait 600s") || len(srv.Requests()) != 1 {
			t.Fatalf("error %q after %d requests", pe.Message, len(srv.Requests()))
		}
	})
	t.Run("Retry-After as an HTTP date", func(t *testing.T) {
		at := time.Now().Add(3 * time.Second).UTC().Format(http.TimeFormat)
		srv := providertest.New(t, providertest.Reply{Status: 503, RetryAfter: at}, providertest.Reply{Text: "ok"})
		w := &waits{}
		p := provider.Retry(newClient(t, srv, provider.Config{}), w.config())
		if _, _, err := retryStream(t, p, w); err != nil {
			t.Fatal(err)
		}
		if len(w.slept) != 1 || w.slept[0] < time.Second || w.slept[0] > 3*time.Second {
			t.Fatalf("slept %v, want about 3s", w.slept)
		}
	})
}

// TestRetryWaitEndsOnCancel uses the real timer: an Esc during a 30 s
// Retry-After must end the wait at once.
func TestRetryWaitEndsOnCancel(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Status: 429, RetryAfter: "30"}, providertest.Reply{Text: "late"})
	p := provider.Retry(newClient(t, srv, provider.Config{}), provider.RetryConfig{})
	ctx, cancel := context.WithCancel(t.Context())
	began := time.Now()
	_, err := p.Stream(ctx, simpleRequest(), func(d provider.Delta) {
		if d.Retry != nil {
			cancel()
		}
	})
	if err == nil || ctx.Err() == nil {
		t.Fatalf("err = %v", err)
	}
	if time.Since(began) > 10*time.Second {
		t.Fatalf("cancel took %v", time.Since(began))
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d requests", n)
	}
}

func TestUnauthorizedNamesTheKeyVariable(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Status: 401}, providertest.Reply{Status: 403})
	c := newClient(t, srv, provider.Config{KeyVariable: "TINY_API_KEY"})
	_, _, err := stream(t, c)
	if pe := providerError(t, err, provider.KindHTTPStatus); !strings.Contains(pe.Message, "TINY_API_KEY") || strings.Contains(pe.Message, testKey) {
		t.Fatalf("401 message %q", pe.Message)
	}
	_, _, err = stream(t, c)
	if pe := providerError(t, err, provider.KindHTTPStatus); !strings.Contains(pe.Message, "TINY_API_KEY") {
		t.Fatalf("403 message %q", pe.Message)
	}
}

// TestRequestTimeoutBoundsKeepAliveStreams: a server that sends SSE
// comments forever is never idle, so only the total deadline ends it.
func TestRequestTimeoutBoundsKeepAliveStreams(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Handler: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for {
			if _, err := w.Write([]byte(": keep-alive\n\n")); err != nil {
				return
			}
			_ = rc.Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}})
	c := newClient(t, srv, provider.Config{RequestTimeout: 300 * time.Millisecond, IdleTimeout: 10 * time.Second})
	_, _, err := stream(t, c)
	pe := providerError(t, err, provider.KindTimeout)
	if !strings.Contains(pe.Message, "--request-timeout") || pe.Retryable {
		t.Fatalf("error %+v", pe)
	}
}

func TestContextWindowFromModelList(t *testing.T) {
	srv := providertest.New(t)
	c := newClient(t, srv, provider.Config{})
	if _, err := c.ContextWindow(t.Context(), "m"); err == nil {
		t.Fatal("no model list: want an error")
	}
	srv.SetModels(map[string]int64{"local/qwen": 32768, "other": 1000})
	n, err := c.ContextWindow(t.Context(), "local/qwen")
	if err != nil || n != 32768 {
		t.Fatalf("ContextWindow = %d, %v", n, err)
	}
	if _, err := c.ContextWindow(t.Context(), "absent"); err == nil {
		t.Fatal("unknown model: want an error")
	}
	if srv.ModelLists() != 3 || len(srv.Requests()) != 0 {
		t.Fatalf("model lists %d, requests %d", srv.ModelLists(), len(srv.Requests()))
	}
}
