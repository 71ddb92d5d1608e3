package ui

import (
	"context"
	"strings"
	"testing"

	"github.com/tiny-agent/tiny-go/internal/mcp"
)

func testForm(t *testing.T) mcp.Form {
	f, err := mcp.ParseForm("ts", "What is your name?", []byte(`{"type":"object","properties":{
		"age":{"type":"integer","title":"Age","default":36},"name":{"type":"string","title":"Name","default":"Ada"},
		"nick":{"type":"string"}},"required":["name"]}`))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Enter takes a default, a typed value is parsed (and asked again when it
// does not parse), an optional field may stay empty; the last question
// sends, declines or cancels.
func TestAskForm(t *testing.T) {
	for _, tt := range []struct {
		input, action string
		content       map[string]any
	}{
		{"\n\n\n\n", mcp.ElicitAccept, map[string]any{"age": int64(36), "name": "Ada"}},
		{"old\n41\nGrace\nG\ny\n", mcp.ElicitAccept, map[string]any{"age": int64(41), "name": "Grace", "nick": "G"}},
		{"\n\n\nn\n", mcp.ElicitDecline, nil},
		{"\nesc\n", mcp.ElicitCancel, nil},
	} {
		var out strings.Builder
		ans, err := AskForm(context.Background(), strings.NewReader(tt.input), &out, testForm(t))
		if err != nil || ans.Action != tt.action || len(ans.Content) != len(tt.content) {
			t.Fatalf("%q: %+v %v\n%s", tt.input, ans, err, out.String())
		}
		for k, v := range tt.content {
			if ans.Content[k] != v {
				t.Errorf("%q: %s = %v, want %v", tt.input, k, ans.Content[k], v)
			}
		}
		if !strings.Contains(out.String(), "MCP ts asks: What is your name?") || !strings.Contains(out.String(), "Name (string, required) [Ada]: ") {
			t.Errorf("shown:\n%s", out.String())
		}
	}
}
