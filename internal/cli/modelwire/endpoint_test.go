package modelwire

import (
	"net/url"
	"testing"
)

func TestEndpointRules(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	cases := []struct {
		endpoint string
		getenv   func(string) string
		want     Access
		ok       bool
	}{
		{DefaultEndpoint, env("OPENROUTER_API_KEY", "or"), Access{"openrouter", "OPENROUTER_API_KEY", "or"}, true},
		{DefaultEndpoint, env("TINY_API_KEY", "t"), Access{"openrouter", "OPENROUTER_API_KEY", ""}, false},
		{"https://eu.openrouter.ai:443/api/v1", env("OPENROUTER_API_KEY", "or"), Access{"openrouter", "OPENROUTER_API_KEY", "or"}, true},
		{"http://localhost:11434/v1", env("OPENROUTER_API_KEY", "or"), Access{"localhost:11434", "TINY_API_KEY", ""}, true},
		{"https://API.example.com/v1", env("TINY_API_KEY", "t"), Access{"api.example.com", "TINY_API_KEY", "t"}, true},
		{"https://openrouter.ai.evil.example/v1", env("OPENROUTER_API_KEY", "or"), Access{"openrouter.ai.evil.example", "TINY_API_KEY", ""}, true},
	}
	for _, tc := range cases {
		got, ok := ResolveEndpoint(tc.endpoint, tc.getenv)
		if got != tc.want || ok != tc.ok {
			t.Errorf("resolveEndpoint(%q) = %+v, %v; want %+v, %v", tc.endpoint, got, ok, tc.want, tc.ok)
		}
	}
	if _, err := url.Parse(DefaultEndpoint); err != nil {
		t.Fatal(err)
	}
}
