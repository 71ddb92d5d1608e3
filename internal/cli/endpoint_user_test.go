package cli

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/cli/modelwire"
	"github.com/tiny-agent/tiny-go/internal/providertest"
)

// lineSession runs tiny-go as a real process in line mode (stdin is not a
// terminal): the banner, then one prompt, then EOF. env is added to the
// process's environment last (so it overrides). It returns stdout.
func lineSession(t *testing.T, srv *providertest.Server, env ...string) string {
	t.Helper()
	cmd := program(t, t.TempDir(), srv)
	cmd.Env = append(cmd.Env, "TINY_CONTEXT_WINDOW=")
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdin = strings.NewReader("hi\n")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("tiny-go: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	return out.String()
}

// TestBannerNamesTheEndpointHost: against an endpoint that is not
// OpenRouter, and with no OpenRouter key at all, the banner's provider is
// the endpoint's host.
func TestBannerNamesTheEndpointHost(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Text: "hello"})
	u, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	out := lineSession(t, srv, "OPENROUTER_API_KEY=")
	banner, _, _ := strings.Cut(out, "Ctrl+C aborts the active operation")
	if !strings.Contains(banner, "\nprovider: "+u.Host+"\n") || !strings.Contains(banner, "\nendpoint: "+srv.URL()) {
		t.Fatalf("the banner does not name %s:\n%s", u.Host, out)
	}
	if strings.Contains(strings.ToLower(banner), "openrouter") {
		t.Fatalf("the banner names OpenRouter:\n%s", banner)
	}
	if !strings.Contains(out, "\nhello\n") {
		t.Fatalf("no answer:\n%s", out)
	}
}

// TestContextWindowFallsBackTo128k: the window the agent uses (shown as
// the share in the usage line, the figure compaction is measured against)
// is 128,000 when neither --context-window / TINY_CONTEXT_WINDOW nor the
// model list gives one: the list is missing (404), lacks the model, or
// does not answer within the lookup's timeout. The list's figure and
// TINY_CONTEXT_WINDOW, when given, are used instead.
func TestContextWindowFallsBackTo128k(t *testing.T) {
	// A prompt of 96,000 tokens: 75% of 128,000.
	answer := providertest.Reply{Text: "hello", Usage: &providertest.Usage{PromptTokens: 96000, CompletionTokens: 5}}
	cases := []struct {
		name  string
		setup func(t *testing.T, srv *providertest.Server) (env []string, asked func() int)
		want  string
	}{
		{"no model list", func(_ *testing.T, srv *providertest.Server) ([]string, func() int) {
			return nil, srv.ModelLists
		}, "75% of window"},
		{"model not listed", func(_ *testing.T, srv *providertest.Server) ([]string, func() int) {
			srv.SetModels(map[string]int64{"other/model": 400000})
			return nil, srv.ModelLists
		}, "75% of window"},
		{"model list times out", func(t *testing.T, srv *providertest.Server) ([]string, func() int) {
			front, asked := hangingModelList(t, srv)
			return []string{"TINY_ENDPOINT=" + front + "/v1"}, asked
		}, "75% of window"},
		// Controls: the share follows the window when one is known.
		{"model listed", func(_ *testing.T, srv *providertest.Server) ([]string, func() int) {
			srv.SetModels(map[string]int64{modelwire.DefaultModel: 400000})
			return nil, srv.ModelLists
		}, "24% of window"},
		{"TINY_CONTEXT_WINDOW", func(_ *testing.T, srv *providertest.Server) ([]string, func() int) {
			srv.SetModels(map[string]int64{modelwire.DefaultModel: 400000})
			return []string{"TINY_CONTEXT_WINDOW=192000"}, nil
		}, "50% of window"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.New(t, answer)
			env, asked := tc.setup(t, srv)
			out := lineSession(t, srv, env...)
			if !strings.Contains(out, "\n96k in · 5 out · "+tc.want+"\n") {
				t.Fatalf("usage line lacks %q:\n%s", tc.want, out)
			}
			if asked != nil && asked() != 1 {
				t.Fatalf("the model list was asked %d times, want once", asked())
			}
		})
	}
}

// hangingModelList is a front for srv whose model list does not answer
// until the client gives up (the test fails if it waits 30 s for that);
// everything else goes to srv. It returns the front's base URL and the
// number of model-list requests it got.
func hangingModelList(t *testing.T, srv *providertest.Server) (string, func() int) {
	t.Helper()
	back, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	back.Path = ""
	proxy := httputil.NewSingleHostReverseProxy(back)
	proxy.FlushInterval = -1
	var asked atomic.Int32
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models") {
			asked.Add(1)
			select {
			case <-r.Context().Done():
			case <-time.After(30 * time.Second):
				t.Error("the model-list lookup waited 30 s: it has no timeout")
				http.Error(w, "gave up", http.StatusNotFound)
			}
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	return front.URL, func() int { return int(asked.Load()) }
}

// TestLineModeShowsTheRetryWait: in line mode the wait is one line of its
// own before the answer.
func TestLineModeShowsTheRetryWait(t *testing.T) {
	srv := providertest.New(t, providertest.Reply{Status: 429, RetryAfter: "1"}, providertest.Reply{Text: "hello"})
	out := lineSession(t, srv)
	if !strings.Contains(out, "\nretrying in 1s: HTTP 429\nhello\n") {
		t.Fatalf("stdout:\n%s", out)
	}
}
