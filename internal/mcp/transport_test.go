package mcp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

func TestResponseLimit(t *testing.T) {
	tests := []struct {
		name          string
		size          int
		contentLength bool
		wantErr       bool
	}{
		{"exactly the limit, streamed", MaxResponseBytes, false, false},
		{"one byte over, streamed", MaxResponseBytes + 1, false, true},
		{"exactly the limit, declared", MaxResponseBytes, true, false},
		{"one byte over, declared", MaxResponseBytes + 1, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := strings.Repeat("z", tt.size)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.contentLength {
					w.Header().Set("Content-Length", strconv.Itoa(len(body)))
				}
				io.WriteString(w, body)
			}))
			defer srv.Close()
			s := catalogServer(t, "l", entry{URL: srv.URL, AllowedTools: []string{"x"}})
			client, err := newHTTPClient(s, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx, obs, stop := observe(context.Background())
			defer stop()
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
			resp, err := client.Do(req)
			var n int
			if err == nil {
				var data []byte
				data, err = io.ReadAll(resp.Body)
				n = len(data)
				resp.Body.Close()
			}
			tooLarge := obs.snapshot().tooLarge
			if tt.wantErr != (err != nil) || tt.wantErr != tooLarge {
				t.Fatalf("read %d bytes, err %v, tooLarge %v", n, err, tooLarge)
			}
			if tt.wantErr && ctx.Err() == nil {
				t.Error("an oversized response did not abort the operation")
			}
			if !tt.wantErr && n != tt.size {
				t.Errorf("read %d of %d bytes", n, tt.size)
			}
		})
	}
}

func TestTokenOnlyForTheServerOrigin(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	s := catalogServer(t, "o", entry{URL: srv.URL + "/mcp", AllowedTools: []string{"x"}})
	client, err := newHTTPClient(s, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{srv.URL + "/mcp", strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/mcp"} {
		resp, err := client.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if len(got) != 2 || got[0] != "Bearer "+testToken || got[1] != "" {
		t.Errorf("Authorization headers %q; want the token for the endpoint's origin only", got)
	}
}

func TestNoTokenWithoutTokenEnv(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	c, err := ParseCatalog([]byte(`{"servers":{"n":{"url":"`+srv.URL+`","allowedTools":["x"]}}}`), testEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	s := c.Servers[0]
	if s.AuthHeader() != "" || s.TokenEnv != "" {
		t.Fatalf("server %+v", s)
	}
	client, _ := newHTTPClient(s, nil, nil)
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(got) != 1 || got[0] != "" {
		t.Errorf("Authorization %q", got)
	}
}
