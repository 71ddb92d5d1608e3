package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/tiny-agent/tiny-go/internal/oauth"
)

// A TypeScript-SDK server asks for input mid-call: the form reaches the
// user with its defaults; accept, decline and cancel reach the server.
func TestElicitationTypeScriptServer(t *testing.T) {
	// A stateless TypeScript-SDK server cannot ask: each request meets a new
	// server instance, which never saw the client's capabilities.
	for _, mode := range []string{"stateful"} {
		url := startTSServer(t, mode)
		for _, tool := range []string{"ask_name", "ask_later"} {
			for _, tt := range []struct {
				answer ElicitAnswer
				want   string
			}{
				{ElicitAnswer{Action: ElicitAccept, Content: map[string]any{"name": "Ada", "age": int64(36)}}, `action=accept content={"age":36,"name":"Ada"}`},
				{ElicitAnswer{Action: ElicitDecline}, `action=decline content=null`},
				{ElicitAnswer{Action: ElicitCancel}, `action=cancel content=null`},
			} {
				var seen []Form
				opts := Options{ConnectTimeout: 20 * time.Second, Elicit: func(_ context.Context, f Form) (ElicitAnswer, error) {
					seen = append(seen, f)
					return tt.answer, nil
				}}
				c, err := Connect(context.Background(), catalogServer(t, "ts", entry{URL: url, AllowedTools: []string{tool}}), opts)
				if err != nil {
					t.Fatal(err)
				}
				res := c.tools[0].Run(context.Background(), []byte(`{}`))
				c.Close()
				if res.IsError || res.Content != tt.want {
					t.Errorf("%s %s %s: %+v", mode, tool, tt.answer.Action, res)
				}
				if len(seen) != 1 || seen[0].Message != "What is your name?" || seen[0].Server != "ts" {
					t.Fatalf("%s: forms %+v", mode, seen)
				}
				// The SDK hands the schema over as a Go map: the order is lost.
				var names []string
				for _, f := range seen[0].Fields {
					names = append(names, f.Name)
				}
				if !slices.Equal(names, []string{"age", "name"}) || seen[0].Defaults()["name"] != "Ada" || seen[0].Defaults()["age"] != int64(36) || !seen[0].Fields[1].Required {
					t.Errorf("%s: fields %+v", mode, seen[0].Fields)
				}
			}
		}
	}
}

func TestParseForm(t *testing.T) {
	f, err := ParseForm("s", "m", []byte(`{"type":"object","properties":{
		"color":{"type":"string","oneOf":[{"const":"red"},{"const":"blue"}],"default":"blue"},
		"n":{"type":"number","default":"x"},"ok":{"type":"boolean","default":true}},"required":["ok"]}`))
	if err != nil {
		t.Fatal(err)
	}
	d := f.Defaults()
	if d["color"] != "blue" || d["ok"] != true || len(d) != 2 {
		t.Errorf("defaults %v (a default of the wrong type is dropped)", d)
	}
	if _, err := f.Fields[0].Parse("green"); err == nil {
		t.Error("a value outside the enum was taken")
	}
	if _, err := ParseForm("s", "m", []byte(`{"type":"object","properties":{"x":{"type":"array"}}}`)); err == nil {
		t.Error("an array field was taken")
	}
}

func FuzzParseForm(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":"string","default":"x"},"b":{"type":"integer","default":3}},"required":["a"]}`))
	f.Add([]byte(`{"properties":{"c":{"type":"string","enum":["x","y"],"default":"z"}}}`))
	f.Add([]byte(`{"properties":{"m":{"type":"array","items":{"anyOf":[{"const":"x","title":"X"}]},"default":["x"],"maxItems":1},"e":{"type":"string","format":"email","minLength":3,"default":"a@b.c"},"n":{"type":"number","minimum":0,"maximum":1,"default":0.5}}}`))
	f.Fuzz(func(t *testing.T, schema []byte) {
		form, err := ParseForm("s", "m", schema)
		if err != nil {
			return
		}
		for _, fl := range form.Fields {
			if fl.Default == nil {
				continue
			}
			// A default always parses back as its own field's value.
			if fl.Multi {
				// Typed back it could split a value with a comma in it;
				// the form UI picks values, it does not parse them.
				if err := fl.Check(fl.Default); err != nil {
					t.Fatalf("default %v of %+v breaks its constraints: %v", fl.Default, fl, err)
				}
				continue
			}
			if _, err := fl.Parse(fl.Text(fl.Default)); err != nil {
				t.Fatalf("default %v of %+v does not parse: %v", fl.Default, fl, err)
			}
		}
	})
}

// A server that asks to sign in fails a run with one line naming the
// command; the browser is never opened outside `tiny-go mcp login`.
func TestSignInNeededHint(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://`+r.Host+`/.well-known/oauth-protected-resource/mcp"`)
		w.WriteHeader(http.StatusUnauthorized)
	}))
	defer srv.Close()
	s := catalogServer(t, "docs", entry{URL: srv.URL + "/mcp", TokenEnv: "UNUSED"})
	s.token, s.TokenEnv = nil, ""
	_, err := Connect(context.Background(), s, Options{OAuth: &OAuthOptions{Store: &oauth.Store{Dir: t.TempDir()}, Browser: func(context.Context, string) error {
		t.Error("the browser was opened")
		return nil
	}}})
	assertConnectError(t, err, ErrorConnectionFailed, "MCP docs: connecting: sign-in needed: run `tiny-go mcp login docs`")
}

// The call timeout stands still while the user answers: a form answered
// after longer than the whole timeout still completes the call.
func TestCallTimeoutPausedWhileAsking(t *testing.T) {
	url := startTSServer(t, "stateful")
	release := make(chan struct{})
	opts := Options{ConnectTimeout: 20 * time.Second, Elicit: func(ctx context.Context, f Form) (ElicitAnswer, error) {
		<-release
		return ElicitAnswer{Action: ElicitAccept, Content: f.Defaults()}, nil
	}}
	s := catalogServer(t, "ts", entry{URL: url, AllowedTools: []string{"ask_name"}, CallTimeoutMs: 1000})
	c, err := Connect(context.Background(), s, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Released only after twice the call timeout has passed.
	time.AfterFunc(2*time.Second, func() { close(release) })
	res := c.tools[0].Run(context.Background(), []byte(`{}`))
	if res.IsError || res.Content != `action=accept content={"age":36,"name":"Ada"}` {
		t.Fatalf("%+v", res)
	}
}

// A form of every field kind from a TypeScript-SDK server: each field is
// read with its constraints and defaults, and an accepted answer reaches
// the server typed (the SDK checks it against the schema).
func TestElicitationFormKinds(t *testing.T) {
	url := startTSServer(t, "stateful")
	var form Form
	opts := Options{ConnectTimeout: 20 * time.Second, Elicit: func(_ context.Context, f Form) (ElicitAnswer, error) {
		form = f
		c := f.Defaults()
		c["email"], c["tier"], c["ratio"], c["features"] = "ada@example.com", "pro", 0.5, []string{"ci", "lint"}
		return ElicitAnswer{Action: ElicitAccept, Content: c}, nil
	}}
	c, err := Connect(context.Background(), catalogServer(t, "ts", entry{URL: url, AllowedTools: []string{"ask_form"}}), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res := c.tools[0].Run(context.Background(), []byte(`{}`))
	want := `action=accept content={"email":"ada@example.com","features":["ci","lint"],"name":"demo","public":false,"ratio":0.5,"region":"eu","replicas":3,"tier":"pro"}`
	if res.IsError || res.Content != want {
		t.Fatalf("got %+v\nwant %s", res, want)
	}
	byName := map[string]Field{}
	for _, f := range form.Fields {
		byName[f.Name] = f
	}
	name, region, features, replicas := byName["name"], byName["region"], byName["features"], byName["replicas"]
	if *name.MinLength != 2 || *name.MaxLength != 20 || !name.Required || byName["email"].Format != "email" {
		t.Errorf("string constraints: %+v %+v", name, byName["email"])
	}
	if region.OptionLabel(1) != "United States" || region.Default != "eu" || byName["tier"].OptionLabel(2) != "team" {
		t.Errorf("enums: %+v %+v", region, byName["tier"])
	}
	if !features.Multi || *features.MaxItems != 2 || !slices.Equal(features.Default.([]string), []string{"ci"}) {
		t.Errorf("multi-select: %+v", features)
	}
	if *replicas.Minimum != 1 || *replicas.Maximum != 9 || replicas.Hint() != "integer, 1 to 9" {
		t.Errorf("integer: %+v %q", replicas, replicas.Hint())
	}
	for _, tt := range []struct {
		f    Field
		text string
	}{{name, "x"}, {byName["email"], "not an address"}, {replicas, "10"}, {features, "ci, docs, lint"}, {features, "ci, ci"}, {byName["tier"], "gold"}} {
		if _, err := tt.f.Parse(tt.text); err == nil {
			t.Errorf("%s took %q", tt.f.Name, tt.text)
		}
	}
	if len(form.Schema) == 0 {
		t.Error("the raw schema was not kept")
	}
}
