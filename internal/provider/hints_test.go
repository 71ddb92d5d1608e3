package provider_test

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// closedPort is an address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// A first request whose connection is refused is sent once more after a
// short wait, then fails naming the URL, the setting that chose it and
// the likely cause; the full backoff is for endpoints that answered before.
func TestRetryFirstRefusedConnectionFailsFast(t *testing.T) {
	endpoint := "http://" + closedPort(t) + "/v1"
	c, err := provider.New(provider.Config{Endpoint: endpoint})
	if err != nil {
		t.Fatal(err)
	}
	var w waits
	cfg := w.config()
	cfg.Endpoint, cfg.EndpointSource = c.URL(), "TINY_ENDPOINT"
	_, _, err = retryStream(t, provider.Retry(c, cfg), &w)
	pe := providerError(t, err, provider.KindConnectionFailed)
	want := "nothing answered at " + endpoint + "/chat/completions (from TINY_ENDPOINT): is the server running?"
	if !strings.Contains(pe.Message, want) || pe.Retryable {
		t.Errorf("message = %q; want it to contain %q", pe.Message, want)
	}
	if len(w.slept) != 1 || w.slept[0] > time.Second {
		t.Errorf("waits %v; want one short wait", w.slept)
	}
}

func TestRetryRefusedAfterTheEndpointAnsweredKeepsRetrying(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Text: "hello"})
	c := newClient(t, srv, provider.Config{})
	var w waits
	p := provider.Retry(c, w.config())
	if _, _, err := retryStream(t, p, &w); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	_, _, err := retryStream(t, p, &w)
	pe := providerError(t, err, provider.KindConnectionFailed)
	if strings.Contains(pe.Message, "is the server running") || len(w.slept) != provider.DefaultMaxSends-1 {
		t.Errorf("message %q after %d waits; want the usual %d", pe.Message, len(w.slept), provider.DefaultMaxSends-1)
	}
}

// An HTTP 404 of the chat endpoint names the URL and the model, and what
// the endpoint's model list says about that model.
func TestNotFoundNamesURLModelAndTheModelList(t *testing.T) {
	for _, tc := range []struct {
		name   string
		models map[string]int64
		want   string
	}{
		{"unknown model", map[string]int64{"other/model": 1000}, `model "test/model"; the endpoint's model list (1 models) does not know this model: check --model or TINY_MODEL`},
		{"known model", map[string]int64{"test/model": 1000}, `model "test/model"; the endpoint's model list knows this model: check the endpoint URL`},
		{"no model list", nil, `model "test/model"; the endpoint's model list could not be read: HTTP 404`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := providertest.New(t, providertest.Reply{Status: 404})
			if tc.models != nil {
				srv.SetModels(tc.models)
			}
			c := newClient(t, srv, provider.Config{})
			_, _, err := stream(t, c)
			pe := providerError(t, err, provider.KindHTTPStatus)
			if !strings.Contains(pe.Message, "POST "+c.URL()) || !strings.Contains(pe.Message, tc.want) {
				t.Errorf("message = %q; want the URL and %q", pe.Message, tc.want)
			}
		})
	}
}
