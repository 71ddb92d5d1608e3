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

// On the line prompt a field says its constraints, a multi-select takes
// its values separated by commas, and a value out of bounds is asked again.
func TestAskFormConstraints(t *testing.T) {
	f, err := mcp.ParseForm("ts", "Set up", []byte(`{"type":"object","properties":{
		"features":{"type":"array","items":{"type":"string","enum":["ci","docs","lint"]},"default":["ci"],"maxItems":2},
		"replicas":{"type":"integer","minimum":1,"maximum":9}}}`))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	ans, err := AskForm(context.Background(), strings.NewReader("ci, docs, lint\ndocs,lint\n12\n5\ny\n"), &out, f)
	if err != nil || ans.Action != mcp.ElicitAccept || ans.Content["replicas"] != int64(5) || strings.Join(ans.Content["features"].([]string), " ") != "docs lint" {
		t.Fatalf("%+v %v\n%s", ans, err, out.String())
	}
	for _, want := range []string{"features (any of ci|docs|lint, separated by commas) [ci]: ", "  choose at most 2\n", "replicas (integer, 1 to 9): ", "  at most 9\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("lacks %q:\n%s", want, out.String())
		}
	}
}
