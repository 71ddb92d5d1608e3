package mcp

import (
	"context"
	"slices"
	"testing"
	"time"
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
