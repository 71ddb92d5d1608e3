package acp

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/mcp"
)

func parseForm(t *testing.T, schema string) mcp.Form {
	t.Helper()
	f, err := mcp.ParseForm("s", "m", []byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// A form of one enum or boolean field offers its values as the options of
// the permission request; each option sends its value.
func TestFormOptionsOfOneChoice(t *testing.T) {
	for _, tt := range []struct {
		schema string
		names  []string
		sends  []any
	}{
		{`{"properties":{"r":{"type":"string","oneOf":[{"const":"eu","title":"Europe"},{"const":"us","title":"United States"}]}},"required":["r"]}`,
			[]string{"Europe", "United States", "Decline"}, []any{"eu", "us"}},
		{`{"properties":{"ok":{"type":"boolean"}}}`, []string{"Yes", "No", "Decline"}, []any{true, false}},
		{`{"properties":{"n":{"type":"integer","default":3},"s":{"type":"string"}}}`, []string{"Send n=3", "Decline"}, []any{nil}},
	} {
		opts := formOptions(parseForm(t, tt.schema))
		var names []string
		for _, o := range opts {
			names = append(names, o.option.Name)
		}
		if !reflect.DeepEqual(names, tt.names) {
			t.Errorf("%s: options %q", tt.schema, names)
		}
		for i, want := range tt.sends {
			c := opts[i].answer.Content
			if want == nil {
				if c["n"] != int64(3) || len(c) != 1 {
					t.Errorf("defaults sent: %v", c)
				}
				continue
			}
			for _, v := range c {
				if v != want || len(c) != 1 {
					t.Errorf("%s option %d sends %v", tt.schema, i, c)
				}
			}
		}
		if last := opts[len(opts)-1].answer.Action; last != mcp.ElicitDecline {
			t.Errorf("the last option %s", last)
		}
	}
}

// The editor's accepted content is checked against the form and typed.
func TestTypedContent(t *testing.T) {
	f := parseForm(t, `{"properties":{"n":{"type":"integer","maximum":9},"m":{"type":"array","items":{"enum":["a","b"]}}},"required":["n"]}`)
	c, err := typedContent(f, map[string]any{"n": 5.0, "m": []any{"b"}, "extra": 1})
	if err != nil || !reflect.DeepEqual(c, map[string]any{"n": int64(5), "m": []string{"b"}}) {
		t.Errorf("%v %v", c, err)
	}
	for _, bad := range []map[string]any{{"n": 12.0}, {"n": 1.5}, {}, {"n": 1.0, "m": []any{"c"}}} {
		if _, err := typedContent(f, bad); err == nil {
			t.Errorf("%v was taken", bad)
		}
	}
}

// deliver takes exactly the responses to a waiting call, whatever else
// the client sends.
func FuzzClientCallsDeliver(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":"tiny-go/1","result":{"action":"accept","content":{"n":1}}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"tiny-go/1","error":{"code":-32601,"message":"no"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"tiny-go/2","method":"x"}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"tiny-go/1","method":"session/prompt"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		ch := make(chan callResponse, 1)
		c := &clientCalls{waiting: map[string]chan callResponse{"tiny-go/1": ch}}
		took := c.deliver(line)
		var msg struct {
			ID     *string         `json:"id"`
			Method json.RawMessage `json:"method"`
		}
		isResponse := json.Unmarshal(line, &msg) == nil && msg.ID != nil && *msg.ID == "tiny-go/1" && msg.Method == nil
		if took != isResponse {
			t.Fatalf("deliver %q = %v", line, took)
		}
		if took && len(ch) != 1 {
			t.Fatal("taken but not handed over")
		}
	})
}
