package modelwire

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/provider"
	"github.com/tiny-agent/tiny-go/internal/provider/anthropic"
	"github.com/tiny-agent/tiny-go/internal/provider/responses"
)

func envOf(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// The choice follows TINY_PROVIDER and the endpoint: each wire takes its
// own key, from its own variable, and a missing one is a usage error that
// names it.
func TestNewChoosesWireAndKey(t *testing.T) {
	cases := []struct {
		name    string
		env     func(string) string
		model   string
		access  Access
		adapter string
		wantErr string
	}{
		{"openrouter by default", envOf("OPENROUTER_API_KEY", " or "), "", Access{"openrouter", OpenRouterKeyVar, "or"}, "", ""},
		{"openrouter without its key", envOf("ANTHROPIC_API_KEY", "a"), "", Access{}, "", "OPENROUTER_API_KEY is not set"},
		{"a local server needs no key", envOf("TINY_ENDPOINT", "http://127.0.0.1:8080/v1", "OPENROUTER_API_KEY", "or"), "", Access{"127.0.0.1:8080", "TINY_API_KEY", ""}, "", ""},
		{"anthropic", envOf("TINY_PROVIDER", "Anthropic", "ANTHROPIC_API_KEY", "a", "OPENROUTER_API_KEY", "or"), "", Access{"anthropic", AnthropicKeyVar, "a"}, anthropic.AdapterIdentity, ""},
		{"anthropic's endpoint alone", envOf("TINY_ENDPOINT", anthropic.DefaultEndpoint, "ANTHROPIC_API_KEY", "a"), "", Access{"anthropic", AnthropicKeyVar, "a"}, anthropic.AdapterIdentity, ""},
		{"anthropic without its key", envOf("TINY_PROVIDER", "anthropic", "OPENROUTER_API_KEY", "or"), "", Access{}, "", "ANTHROPIC_API_KEY is not set"},
		{"responses", envOf("TINY_PROVIDER", "openai-responses", "OPENAI_API_KEY", "o"), "", Access{"openai", OpenaiKeyVar, "o"}, responses.AdapterIdentity, ""},
		{"responses without its key", envOf("TINY_PROVIDER", "openai-responses", "OPENROUTER_API_KEY", "or"), "", Access{}, "", "OPENAI_API_KEY is not set"},
		{"an unknown provider", envOf("TINY_PROVIDER", "acme", "OPENROUTER_API_KEY", "or"), "", Access{}, "", `not "acme"`},
		{"a bad reasoning effort", envOf("TINY_REASONING", "max", "OPENROUTER_API_KEY", "or"), "", Access{}, "", "must be off, low, medium or high"},
		{"the flag's model over TINY_MODEL", envOf("TINY_MODEL", "env/model", "OPENROUTER_API_KEY", "or"), "flag/model", Access{"openrouter", OpenRouterKeyVar, "or"}, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(Options{Getenv: tc.env, Model: tc.model})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Access != tc.access {
				t.Errorf("access = %+v, want %+v", c.Access, tc.access)
			}
			if got := c.Identity().Adapter; got != tc.adapter {
				t.Errorf("adapter = %q, want %q", got, tc.adapter)
			}
			if got := IdentityFromEnv(tc.env); got != c.Identity() {
				t.Errorf("IdentityFromEnv = %+v, the choice's %+v", got, c.Identity())
			}
		})
	}
	c, err := New(Options{Getenv: envOf("TINY_MODEL", "env/model", "OPENROUTER_API_KEY", "or")})
	if err != nil || c.Model != "env/model" {
		t.Fatalf("model = %q, %v; want TINY_MODEL's", c.Model, err)
	}
	if c, _ := New(Options{Getenv: envOf("OPENROUTER_API_KEY", "or")}); c.Model != DefaultModel {
		t.Fatalf("model = %q, want the default", c.Model)
	}
}

// Web search: left out by print mode's flags, else chosen for the wire
// (OpenRouter's plugin is never on by default: it bills every request).
func TestWebSearchChoice(t *testing.T) {
	env := envOf("OPENROUTER_API_KEY", "or")
	c, err := New(Options{Getenv: env, NoWebSearch: true})
	if err != nil {
		t.Fatal(err)
	}
	if s := c.WebSearchStatus(); !strings.Contains(s, "not offered (--tools") || c.WebSearchTools() != nil {
		t.Fatalf("status %q, tools %v", s, c.WebSearchTools())
	}
	if c, err = New(Options{Getenv: env}); err != nil {
		t.Fatal(err)
	}
	if c.webSearch.Native {
		t.Fatal("OpenRouter's web plugin is on by default")
	}
	if _, err := New(Options{Getenv: envOf("OPENROUTER_API_KEY", "or", "TINY_WEB_SEARCH", "sometimes")}); err == nil {
		t.Fatal("a bad TINY_WEB_SEARCH was taken")
	}
	var none *Choice
	if s := none.WebSearchStatus(); s != "web_search: not offered" {
		t.Fatalf("nil choice: %q", s)
	}
}

// The client goes to the chosen endpoint, shown without its password.
func TestNewClientShowsEndpoint(t *testing.T) {
	c, err := New(Options{Getenv: envOf("TINY_ENDPOINT", "http://user:secret@127.0.0.1:9/v1")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.NewClient(nil, Timeouts{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(c.EndpointShown, "127.0.0.1:9") || strings.Contains(c.EndpointShown, "secret") {
		t.Fatalf("shown = %q", c.EndpointShown)
	}
}

type fakeProvider struct{ errs []error }

func (f *fakeProvider) Stream(context.Context, provider.Request, func(provider.Delta)) (provider.Response, error) {
	err := f.errs[0]
	f.errs = f.errs[1:]
	return provider.Response{}, err
}

// Only a process whose every request failed, the last for its settings,
// has nothing to resume.
func TestWatchOnlyConfigFailures(t *testing.T) {
	refused := &provider.Error{Kind: provider.KindHTTPStatus, Status: 401, Message: "401"}
	flaky := &provider.Error{Kind: provider.KindHTTPStatus, Status: 500, Message: "500"}
	cases := []struct {
		name string
		errs []error
		want bool
	}{
		{"no request", nil, false},
		{"refused", []error{refused}, true},
		{"refused, then a server error", []error{refused, flaky}, false},
		{"a server error, then refused", []error{flaky, refused}, true},
		{"one success, then refused", []error{nil, refused}, false},
		{"another error", []error{errors.New("boom")}, false},
	}
	for _, tc := range cases {
		c := &Choice{}
		if tc.errs != nil {
			c.watch = &watch{inner: &fakeProvider{errs: tc.errs}}
			for range tc.errs {
				_, _ = c.watch.Stream(t.Context(), provider.Request{}, nil)
			}
		}
		if got := c.OnlyConfigFailures(); got != tc.want {
			t.Errorf("%s: OnlyConfigFailures = %v, want %v", tc.name, got, tc.want)
		}
	}
	var none *Choice
	if none.OnlyConfigFailures() {
		t.Fatal("a nil choice saw failures")
	}
}

func TestRequestTimeout(t *testing.T) {
	env := envOf("TINY_REQUEST_TIMEOUT", "3m")
	if d, err := RequestTimeout(time.Minute, env); err != nil || d != time.Minute {
		t.Errorf("flag: %v, %v", d, err)
	}
	if d, err := RequestTimeout(0, env); err != nil || d != 3*time.Minute {
		t.Errorf("env: %v, %v", d, err)
	}
	if _, err := RequestTimeout(0, envOf("TINY_REQUEST_TIMEOUT", "soon")); err == nil {
		t.Error("a bad TINY_REQUEST_TIMEOUT was taken")
	}
	if _, err := RequestTimeout(-time.Second, env); err == nil {
		t.Error("a negative --request-timeout was taken")
	}
}
